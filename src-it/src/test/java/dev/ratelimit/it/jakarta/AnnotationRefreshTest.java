package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.EditableConfigSource;
import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import dev.ratelimit.jakarta.RateLimitedExtension;
import dev.ratelimit.jakarta.RateLimitedInterceptor;
import dev.ratelimit.jakarta.RateLimitedListInterceptor;
import dev.ratelimit.jakarta.RateLimitedMethods;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code ratelimit.refresh} under {@code @RateLimited} methods, on Jersey, Jetty 12 and a real
 * Valkey: a reading the application could not have started with (a rule an annotation names
 * removed, or its key naming no parameter of the method) is a bad reading, refused whole as at
 * start-up, not a silent end of the method's limit.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationRefreshTest {

    private static final long REFRESH_MILLIS = 200;

    private final ValkeyServer valkey;

    AnnotationRefreshTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private EditableConfigSource source() {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JakartaApp.settings(valkey.url(), "ratelimit.rules", "login,other",
                "ratelimit.rule.login.scope", "method",
                "ratelimit.rule.login.limit", "2", "ratelimit.rule.login.window", "1h",
                "ratelimit.rule.login.key", "param:username",
                "ratelimit.rule.other.limit", "5", "ratelimit.rule.other.window", "1h",
                "ratelimit.refresh", REFRESH_MILLIS + "ms", "ratelimit.deny-cache.enabled", "false"));
        return source;
    }

    private static int allowedOf(JakartaApp app, String user, int tries) throws Exception {
        int allowed = 0;
        for (int i = 0; i < tries; i++) {
            if (app.postForm("/login", "username=" + user + "&password=secret").statusCode() == 200) {
                allowed++;
            }
        }
        return allowed;
    }

    @Test
    void aRefreshRemovingTheRuleAnAnnotationNamesIsRefused() throws Exception {
        EditableConfigSource source = source();
        try (JakartaApp app = JakartaApp.start(source, false, Resources.Login.class)) {
            assertThat(allowedOf(app, "alice", 1)).isEqualTo(1);
            source.values.put("ratelimit.rules", "other");
            app.refreshSettings();
            assertThat(allowedOf(app, "alice", 5)).as("login's limit of 2, one used").isEqualTo(1);
        }
    }

    /**
     * The limits start at the first call of any annotated method: a refresh made after it must
     * still be checked against every annotated method, the ones not called yet too.
     */
    @Test
    void aRefreshRemovingTheRuleOfAMethodNotCalledYetIsRefused() throws Exception {
        EditableConfigSource source = source();
        source.values.put("ratelimit.rules", "login,other,api");
        source.values.put("ratelimit.rule.api.scope", "method");
        source.values.put("ratelimit.rule.api.limit", "100");
        source.values.put("ratelimit.rule.api.window", "1h");
        source.values.put("ratelimit.rule.api.key", "global");
        try (JakartaApp app = JakartaApp.start(source, false, Resources.Login.class, EdgeResources.Annotated.class)) {
            // The limits start here, with another method than the login form.
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            source.values.put("ratelimit.rules", "other,api");
            app.refreshSettings();
            assertThat(allowedOf(app, "carol", 5)).as("login's limit of 2").isEqualTo(2);
        }
    }

    /**
     * On a Jakarta EE server CDI starts (and checks its annotated methods) before the servlet
     * filter's {@code init}, which then starts the limits: a refresh after that, before any
     * annotated call, must still be checked against the CDI methods.
     */
    @Test
    void aRefreshAfterTheFiltersStartIsCheckedAgainstTheCdiMethodsCheckedBeforeIt() throws Exception {
        EditableConfigSource source = source();
        source.values.put("ratelimit.rules", "other,reset,daily,welcome");
        source.values.putAll(Map.of("ratelimit.rule.reset.limit", "3", "ratelimit.rule.reset.window", "1h",
                "ratelimit.rule.reset.key", "param:accountId",
                "ratelimit.rule.daily.limit", "100", "ratelimit.rule.daily.window", "1d",
                "ratelimit.rule.welcome.limit", "1", "ratelimit.rule.welcome.window", "1h",
                "ratelimit.rule.welcome.key", "param:0"));
        source.values.putAll(Map.of("ratelimit.rule.reset.scope", "method", "ratelimit.rule.daily.scope", "method",
                "ratelimit.rule.welcome.scope", "method"));
        try (WeldContainer weld = new Weld("ratelimit-" + System.nanoTime()).disableDiscovery()
                .addExtension(new RateLimitedExtension())
                .addBeanClasses(RateLimitedMethods.class, RateLimitedInterceptor.class, RateLimitedListInterceptor.class,
                        MailService.class).initialize()) {
            // CDI's start event, as a server fires it: before the filter's init.
            ServletContextListener cdiStart = new ServletContextListener() {
                @Override
                public void contextInitialized(ServletContextEvent event) {
                    weld.getBeanManager().getEvent().select(Initialized.Literal.of(ApplicationScoped.class))
                            .fire(event.getServletContext());
                }
            };
            try (JakartaApp app = JakartaApp.startWithListeners(source, true, List.of(cdiStart), EdgeResources.Plain.class)) {
                source.values.put("ratelimit.rules", "other,daily,welcome");
                app.refreshSettings();
                MailService mails = weld.select(MailService.class).get();
                for (int i = 0; i < 3; i++) {
                    mails.sendReset(9);
                }
                assertThatThrownBy(() -> mails.sendReset(9)).as("reset's limit of 3")
                        .isInstanceOf(RateLimitExceededException.class);
            }
        }
    }

    @Test
    void aRefreshKeyingTheRuleByAParameterTheMethodLacksIsRefused() throws Exception {
        EditableConfigSource source = source();
        try (JakartaApp app = JakartaApp.start(source, false, Resources.Login.class)) {
            assertThat(allowedOf(app, "bob", 1)).isEqualTo(1);
            source.values.put("ratelimit.rule.login.key", "param:user");
            app.refreshSettings();
            assertThat(allowedOf(app, "bob", 5)).as("login's limit of 2, one used").isEqualTo(1);
        }
    }
}
