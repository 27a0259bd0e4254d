package dev.ratelimit.it.jakarta;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import dev.ratelimit.micrometer.MicrometerListenerProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.config.PropertiesConfigSource;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimited}'s start at the first annotated call (not at deployment), on Jersey,
 * Jetty 12, Weld SE and a real Valkey: many first calls at once start one stack and lose no
 * count; what the application puts in the servlet context after CDI's start is what the
 * decisions report to. The life cycle around that start: {@link LazyStartLifecycleTest}.
 */
@ExtendWith(ValkeyExtension.class)
class LazyStartTest {

    private static final int LIMIT = 5;

    private final ValkeyServer valkey;

    LazyStartTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings() {
        return JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", String.valueOf(LIMIT), "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.key", "global");
    }

    static long clients(ValkeyServer valkey) {
        try (var jedis = valkey.connect()) {
            return jedis.clientList().lines().count() - 1;
        }
    }

    /**
     * The connections to Valkey once they are at most {@code atMost}, or after 10 s: Valkey drops
     * a closed connection from {@code CLIENT LIST} a moment after the socket closes, a longer
     * moment on a busy machine.
     */
    static long clientsOnceAtMost(ValkeyServer valkey, long atMost) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long clients;
        while ((clients = clients(valkey)) > atMost && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return clients;
    }

    static int mbeans() throws Exception {
        return ManagementFactory.getPlatformMBeanServer()
                .queryNames(new ObjectName("dev.ratelimit:type=RateLimiter,rule=api,*"), null).size();
    }

    /** One call of the shared rule, by the REST method or the CDI one: whether it was allowed. */
    private static boolean allowed(JakartaApp app, ApiService api, boolean rest) throws Exception {
        if (rest) {
            int status = app.get("/p").statusCode();
            assertThat(status).as("REST status").isIn(200, 429);
            return status == 200;
        }
        try {
            api.call();
            return true;
        } catch (RateLimitExceededException e) {
            return false;
        }
    }

    @Test
    void manyFirstCallsAtOnceOfARestAndACdiMethodStartOneStackAndLoseNoCount() throws Exception {
        manyFirstCallsAtOnce(false);
    }

    /** The filter registered too: its init starts the stack, which the annotated methods join. */
    @Test
    void manyFirstCallsAtOnceUnderTheFilterTooStartOneStackAndLoseNoCount() throws Exception {
        manyFirstCallsAtOnce(true);
    }

    private void manyFirstCallsAtOnce(boolean withFilter) throws Exception {
        valkey.flushAll();
        int beansBefore = mbeans();
        long clientsBefore = clients(valkey);
        int threads = 16;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (JakartaApp app = JakartaApp.start(settings(), withFilter, EdgeResources.Annotated.class);
             WeldContainer weld = weld(app, ApiService.class)) {
            assertThat(mbeans()).as("started before the first call by the filter's init only")
                    .isEqualTo(beansBefore + (withFilter ? 1 : 0));
            ApiService api = weld.select(ApiService.class).get();
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> calls = new ArrayList<>();
            for (int i = 0; i < threads * 2; i++) {
                boolean rest = i % 2 == 0;
                calls.add(pool.submit(() -> {
                    go.await();
                    return allowed(app, api, rest);
                }));
            }
            go.countDown();
            int allowed = 0;
            for (Future<Boolean> call : calls) {
                allowed += call.get(60, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(allowed).as("one limit of " + LIMIT + " over both ways in").isEqualTo(LIMIT);
            assertThat(mbeans()).as("one stack").isEqualTo(beansBefore + 1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(mbeans()).isEqualTo(beansBefore);
        assertThat(clientsOnceAtMost(valkey, clientsBefore)).as("no connection left").isLessThanOrEqualTo(clientsBefore);
    }

    /**
     * A Jakarta EE server starts CDI before the application's listeners, which then put a
     * {@link RateLimitListener} in the servlet context: the CDI method's and the resource
     * method's decisions both report to it.
     */
    @Test
    void aListenerPutInTheContextAfterCdisStartHearsBothWaysIn() throws Exception {
        List<String> heard = new CopyOnWriteArrayList<>();
        RateLimitListener recorder = new RateLimitListener() {
            @Override
            public void onEvent(String rule, Event event) {
                heard.add(rule + ":" + event);
            }

            @Override
            public void onClose() {
                heard.add("closed");
            }
        };
        try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.Annotated.class);
             WeldContainer weld = weld(app, ApiService.class)) {
            // What the application's ServletContextListener does, after CDI's start event.
            app.servletContext().setAttribute(RateLimitListener.class.getName(), recorder);
            ApiService api = weld.select(ApiService.class).get();
            assertThat(api.call()).isEqualTo("ok");
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            assertThat(heard).containsExactly("api:ALLOWED", "api:ALLOWED");
        }
        assertThat(heard).as("told of the stop once").containsExactly("api:ALLOWED", "api:ALLOWED", "closed");
    }

    /**
     * A listener of the application puts a Micrometer registry in the servlet context (after CDI's
     * start on a Jakarta EE server): the decisions of both ways in, with or without the filter,
     * are counted in it.
     */
    @Test
    void aRegistryAListenerPutsInTheContextCountsBothWaysIn() throws Exception {
        for (boolean withFilter : new boolean[] {false, true}) {
            valkey.flushAll();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            ServletContextListener metrics = new ServletContextListener() {
                @Override
                public void contextInitialized(ServletContextEvent event) {
                    event.getServletContext().setAttribute(MicrometerListenerProvider.REGISTRY_ATTRIBUTE, registry);
                }
            };
            try (JakartaApp app = JakartaApp.startWithListeners(new PropertiesConfigSource(settings(), "test", 100),
                    withFilter, List.of(metrics), EdgeResources.Annotated.class);
                 WeldContainer weld = weld(app, ApiService.class)) {
                assertThat(weld.select(ApiService.class).get().call()).isEqualTo("ok");
                assertThat(app.get("/p").statusCode()).isEqualTo(200);
                var allowed = registry.find("ratelimit.decisions").tag("rule", "api").tag("outcome", "allowed").counter();
                assertThat(allowed).as("filter " + withFilter).isNotNull();
                assertThat(allowed.count()).as("filter " + withFilter).isEqualTo(2.0);
            }
        }
    }
}
