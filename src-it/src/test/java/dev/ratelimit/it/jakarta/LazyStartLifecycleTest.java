package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.servlet.RateLimits;
import io.smallrye.config.PropertiesConfigSource;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static dev.ratelimit.it.jakarta.LazyStartTest.clients;
import static dev.ratelimit.it.jakarta.LazyStartTest.clientsOnceAtMost;
import static dev.ratelimit.it.jakarta.LazyStartTest.mbeans;
import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The life of {@code @RateLimited}'s limits started at the first call, on Jersey, Jetty 12, Weld SE
 * and a real Valkey: an application stopped before any call, or called while it stops, leaves
 * nothing running (MBeans, connections, the refresh's thread); a context restarted in place
 * starts them again at its first call.
 */
@ExtendWith(ValkeyExtension.class)
class LazyStartLifecycleTest {

    private final ValkeyServer valkey;

    LazyStartLifecycleTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings() {
        return JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "5", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.key", "global");
    }

    /** A context restarted (a reload) starts its limits again at the first call, one stack, the old one stopped. */
    @Test
    void aRestartedContextStartsItsLimitsAgainAtTheFirstCall() throws Exception {
        int beansBefore = mbeans();
        try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.Annotated.class)) {
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            app.restart();
            assertThat(mbeans()).as("the old stack stopped, the new one not started yet").isEqualTo(beansBefore);
            HttpResponse<String> again = app.get("/p");
            assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
            assertThat(mbeans()).isEqualTo(beansBefore + 1);
        }
        assertThat(mbeans()).isEqualTo(beansBefore);
    }

    /** The settings refresh the first call started stops with the application. */
    @Test
    void aStoppedApplicationLeavesNoRefreshThread() throws Exception {
        long before = refreshThreads();
        Map<String, String> settings = settings();
        settings.put("ratelimit.refresh", "200ms");
        try (JakartaApp app = JakartaApp.start(settings, false, EdgeResources.Annotated.class)) {
            assertThat(refreshThreads()).as("nothing started before the first call").isEqualTo(before);
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            assertThat(refreshThreads()).isEqualTo(before + 1);
        }
        for (int i = 0; i < 100 && refreshThreads() > before; i++) {
            Thread.sleep(50);
        }
        assertThat(refreshThreads()).isEqualTo(before);
    }

    private static long refreshThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("ratelimit-settings-refresh")).count();
    }

    @Test
    void anApplicationStoppedBeforeAnyCallLeavesNothing() throws Exception {
        int beansBefore = mbeans();
        long clientsBefore = clients(valkey);
        try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.Annotated.class);
             WeldContainer weld = weld(app, ApiService.class)) {
            assertThat(mbeans()).isEqualTo(beansBefore);
        }
        assertThat(mbeans()).isEqualTo(beansBefore);
        assertThat(clientsOnceAtMost(valkey, clientsBefore)).isLessThanOrEqualTo(clientsBefore);
    }

    /**
     * A CDI method called while its application stops, after the limits were stopped (here by an
     * application listener stopped after the library's, as a bean's {@code @PreDestroy} or a
     * task finishing late may call it), must not start a stack nobody will stop: MBeans under
     * the deployment's name, Valkey connections, threads. Whether the call is refused or let
     * through, nothing may be left running.
     */
    @Test
    void aCallWhileTheApplicationStopsLeavesNothingRunning() throws Exception {
        int beansBefore = mbeans();
        long clientsBefore = clients(valkey);
        AtomicReference<ApiService> api = new AtomicReference<>();
        List<String> lastCall = new CopyOnWriteArrayList<>();
        ServletContextListener flushOnStop = new ServletContextListener() {
            @Override
            public void contextDestroyed(ServletContextEvent event) {
                try {
                    lastCall.add(api.get().call());
                } catch (RuntimeException e) {
                    lastCall.add(e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        };
        JakartaApp app = JakartaApp.startWithListeners(new PropertiesConfigSource(settings(), "test", 100), false,
                List.of(flushOnStop), EdgeResources.Annotated.class);
        try (WeldContainer weld = weld(app, ApiService.class)) {
            api.set(weld.select(ApiService.class).get());
            // The application's life: its REST method used, its CDI method not yet.
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            app.close();
            assertThat(lastCall).hasSize(1);
            assertThat(mbeans()).as("MBeans of a stopped application; last call: " + lastCall).isEqualTo(beansBefore);
            assertThat(clientsOnceAtMost(valkey, clientsBefore)).as("connections of a stopped application")
                    .isLessThanOrEqualTo(clientsBefore);
        } finally {
            // Whatever the call started must not outlive this test and skew the others' counts.
            RateLimits.stop(app.servletContext());
        }
    }
}
