package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import jakarta.enterprise.inject.spi.Unmanaged;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.Map;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @RateLimited} CDI bean methods on Weld SE, against a real Valkey: the application's
 * limits started from its settings when the container hands the interceptor the servlet context
 * (the {@code @Initialized(ApplicationScoped.class)} event of a web application, fired here as a
 * Jakarta EE server fires it), a Jersey app on Jetty 12 supplying that context.
 */
@ExtendWith(ValkeyExtension.class)
class CdiAnnotationTest {

    private final ValkeyServer valkey;

    CdiAnnotationTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings() {
        return JakartaApp.settings(valkey.url(), "ratelimit.rules", "reset,daily,welcome",
                "ratelimit.rule.welcome.scope", "method",
                "ratelimit.rule.welcome.limit", "1", "ratelimit.rule.welcome.window", "1h",
                "ratelimit.rule.welcome.key", "param:0",
                "ratelimit.rule.reset.scope", "method",
                "ratelimit.rule.reset.limit", "3", "ratelimit.rule.reset.window", "1h",
                "ratelimit.rule.reset.key", "param:accountId",
                "ratelimit.rule.daily.scope", "method",
                "ratelimit.rule.daily.limit", "4", "ratelimit.rule.daily.window", "1d",
                "ratelimit.rule.daily.key", "global");
    }

    @Test
    void threeResetMailsPerAccountByTheParametersName() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false); WeldContainer weld = weld(app, MailService.class)) {
            MailService mails = weld.select(MailService.class).get();
            for (int i = 0; i < 3; i++) {
                mails.sendReset(42);
            }
            assertThatThrownBy(() -> mails.sendReset(42)).isInstanceOfSatisfying(RateLimitExceededException.class,
                    e -> {
                        assertThat(e.decision().status()).hasValue(429);
                        assertThat(e.decision().rules()).containsExactly("reset");
                        assertThat(e.decision().retryAfterSeconds()).isPositive();
                        assertThat(e.decision().problem()).hasValueSatisfying(
                                json -> assertThat(json).contains("\"rule\":\"reset\""));
                    });
            mails.sendReset(43);
            assertThat(mails.sent()).containsExactly("reset:42", "reset:42", "reset:42", "reset:43");
            assertThat(valkey.connect().keys("*param.accountId:42*")).isNotEmpty();
        }
    }

    @Test
    void aParameterByItsPosition() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false); WeldContainer weld = weld(app, MailService.class)) {
            MailService mails = weld.select(MailService.class).get();
            mails.sendWelcome(5);
            assertThatThrownBy(() -> mails.sendWelcome(5)).isInstanceOf(RateLimitExceededException.class);
            mails.sendWelcome(6);
            assertThat(mails.sent()).containsExactly("welcome:5", "welcome:6");
        }
    }

    @Test
    void aCallThatThrowsAListedExceptionIsGivenBack() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false); WeldContainer weld = weld(app, MailService.class)) {
            MailService mails = weld.select(MailService.class).get();
            for (int i = 0; i < 5; i++) {
                assertThatThrownBy(() -> mails.sendResetUnlessRefused(7, true))
                        .isInstanceOf(MailService.MailRefused.class);
            }
            for (int i = 0; i < 3; i++) {
                mails.sendResetUnlessRefused(7, false);
            }
            assertThatThrownBy(() -> mails.sendResetUnlessRefused(7, false))
                    .isInstanceOf(RateLimitExceededException.class);
        }
    }

    @Test
    void twoAnnotationsAreOneAllOrNothingDecision() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false); WeldContainer weld = weld(app, MailService.class)) {
            MailService mails = weld.select(MailService.class).get();
            for (int i = 0; i < 3; i++) {
                mails.sendNewsletter(1);
            }
            // Refused by reset: daily must not have counted it, or account 2's first would be refused.
            assertThatThrownBy(() -> mails.sendNewsletter(1)).isInstanceOfSatisfying(RateLimitExceededException.class,
                    e -> assertThat(e.decision().rules()).containsExactly("reset", "daily"));
            mails.sendNewsletter(2);
            assertThatThrownBy(() -> mails.sendNewsletter(3)).isInstanceOfSatisfying(RateLimitExceededException.class,
                    e -> assertThat(e.decision().problem()).hasValueSatisfying(
                            json -> assertThat(json).contains("\"violated-policies\":[\"daily\"]")));
            assertThat(mails.sent()).containsExactly("newsletter:1", "newsletter:1", "newsletter:1", "newsletter:2");
        }
    }

    @Test
    void aRefusalUnderARestRequestIsTheFiltersOwn429() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(), false);
             WeldContainer weld = weld(plain, MailService.class);
             JakartaApp app = JakartaApp.start(settings(), false, new ResetResource(weld.select(MailService.class).get()))) {
            for (int i = 0; i < 3; i++) {
                assertThat(app.postForm("/accounts/9/reset", "").body()).isEqualTo("sent");
            }
            HttpResponse<String> refused = app.postForm("/accounts/9/reset", "");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            assertThat(refused.headers().firstValue("RateLimit")).hasValueSatisfying(
                    value -> assertThat(value).startsWith("\"reset\";r=0;"));
            assertThat(refused.body()).contains("\"status\":429", "\"rule\":\"reset\"");
        }
    }

    @Test
    void aKeyParameterTheMethodLacksFailsTheStartNamingBoth() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false)) {
            assertThatThrownBy(() -> weld(app, TypoMailService.class).close())
                    .satisfies(e -> assertThat(RestAnnotationTest.causes(e)).contains("@RateLimited(\"reset\") on "
                            + TypoMailService.class.getName() + ".sendReset: the rule's key part param:accountId"));
        }
    }

    /**
     * A server's REST runtime may make a resource through CDI without CDI's discovery having seen
     * its class (Payara's Jersey does): the interceptor runs, the extension found nothing, and the
     * start event found no annotated method to start for. The limits start, and the method is
     * checked, at its first call.
     */
    @Test
    void aMethodDiscoveryNeverSawIsCheckedAndLimitedAtItsFirstCall() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false); WeldContainer weld = weld(app)) {
            Unmanaged.UnmanagedInstance<MailService> made = new Unmanaged<>(weld.getBeanManager(), MailService.class)
                    .newInstance().produce().inject().postConstruct();
            MailService mails = made.get();
            for (int i = 0; i < 3; i++) {
                mails.sendReset(7);
            }
            assertThatThrownBy(() -> mails.sendReset(7)).isInstanceOf(RateLimitExceededException.class);
            mails.sendReset(8);

            TypoMailService typo = new Unmanaged<>(weld.getBeanManager(), TypoMailService.class)
                    .newInstance().produce().inject().postConstruct().get();
            assertThatThrownBy(() -> typo.sendReset(7)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("@RateLimited(\"reset\") on " + TypoMailService.class.getName()
                            + ".sendReset: the rule's key part param:accountId");
        }
    }
}
