package dev.ratelimit.it;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisMonitor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit-micrometer} with no code on real Jetty and Valkey: the application only puts
 * its registry in the servlet context; after a scripted sequence every counter holds exactly
 * what happened, and a Prometheus scrape shows them.
 */
@ExtendWith(ValkeyExtension.class)
class MicrometerTest {

    private final ValkeyServer valkey;

    MicrometerTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void theModuleOnTheClassPathCountsEveryOutcomeExactlyAndPrometheusShowsThem() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api,shadow",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", "5",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.shadow.match", "/shadow", "ratelimit.rule.shadow.limit", "1",
                "ratelimit.rule.shadow.window", "1h", "ratelimit.rule.shadow.shadow", "true");
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(MeterRegistry.class.getName(), registry))) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                statuses.add(app.get("/", "X-Caller", "a").statusCode());
            }
            // 5 allowed; the 6th rejected by Valkey, the 7th by the deny cache.
            assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429);
            // Shadow: 2 observed on /shadow (each also decided by api, for caller b).
            app.get("/shadow", "X-Caller", "b");
            app.get("/shadow", "X-Caller", "b");

            assertThat(count(registry, "api", "allowed")).isEqualTo(5 + 2);
            assertThat(count(registry, "api", "rejected")).isEqualTo(2);
            assertThat(count(registry, "api", "deny_cache_hit")).isEqualTo(1);
            assertThat(count(registry, "shadow", "allowed")).isEqualTo(1);
            assertThat(count(registry, "shadow", "shadow_rejected")).isEqualTo(1);
            assertThat(registry.find("ratelimit.near.limit").tag("rule", "api").counter().count())
                    .as("allowed with 1 or 0 of 5 left").isEqualTo(2);
            assertThat(registry.find("ratelimit.decision").tag("rule", "api").timer().count())
                    .as("calls to Valkey: 5 allowed, 1 rejected, 2 with the shadow rule").isEqualTo(8);
            assertThat(registry.find("ratelimit.breaker.open").gauge().value()).isZero();

            String scrape = registry.scrape();
            System.out.println(scrape.lines().filter(l -> l.startsWith("ratelimit_")).toList());
            assertThat(scrape).contains("ratelimit_decisions_total{outcome=\"allowed\",rule=\"api\"} 7.0")
                    .contains("ratelimit_decisions_total{outcome=\"deny_cache_hit\",rule=\"api\"} 1.0")
                    .contains("ratelimit_near_limit_total{rule=\"api\"} 2.0")
                    .contains("ratelimit_breaker_open 0.0")
                    .doesNotContain("X-Caller").doesNotContain("header.x-caller");
        }
        // Undeployed: its meters leave the registry, which may outlive the application.
        assertThat(registry.find("ratelimit.decisions").counters()).isEmpty();
        assertThat(registry.find("ratelimit.decision").timers()).isEmpty();
        assertThat(registry.find("ratelimit.breaker.open").gauges()).isEmpty();
    }

    @Test
    void aRequestALocalLeaseServedIsCountedAsALeaseHitAndOnlyThat() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // One caller, one request at a time: each request made one deciding call (its own units,
        // or the next lease, taken ahead by a request a lease served) or none, a lease hit. The
        // calls giving a replaced lease's remnant back are another function's, not counted.
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api,tight",
                "ratelimit.rule.api.algorithm", "token-bucket", "ratelimit.rule.api.limit", "1000",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.local-lease", "8", "ratelimit.rule.api.local-lease-time", "30s",
                "ratelimit.rule.tight.match", "/tight", "ratelimit.rule.tight.limit", "1",
                "ratelimit.rule.tight.window", "1h", "ratelimit.rule.tight.key", "header:X-Caller");
        int requests = 40;
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(MeterRegistry.class.getName(), registry))) {
            // Another caller first, so that the library is loaded before the calls are counted.
            assertThat(app.get("/", "X-Caller", "warm").statusCode()).isEqualTo(200);
            double warmHits = count(registry, "api", "lease_hit");
            long calls;
            try (DecidingCalls deciding = new DecidingCalls(valkey)) {
                for (int i = 0; i < requests; i++) {
                    assertThat(app.get("/", "X-Caller", "a").statusCode()).isEqualTo(200);
                }
                calls = deciding.count("{header.x-caller:a}");
            }
            assertThat(calls).as("function calls for " + requests + " requests").isBetween(1L, requests - 1L);
            assertThat(warmHits).isZero();
            assertThat(count(registry, "api", "allowed")).isEqualTo(requests + 1);
            double hits = count(registry, "api", "lease_hit");
            assertThat(calls).as("function calls for %d requests", requests).isLessThan(requests / 2);
            assertThat(hits).as("requests that made no call, of %d with %d calls", requests, calls)
                    .isEqualTo(requests - calls);
            assertThat(registry.scrape()).contains("ratelimit_decisions_total{outcome=\"lease_hit\",rule=\"api\"} "
                    + hits);

            // Refused by another rule: the lease's units go back, and it is no hit.
            assertThat(app.get("/tight", "X-Caller", "a").statusCode()).isEqualTo(200);
            double beforeRefusal = count(registry, "api", "lease_hit");
            assertThat(app.get("/tight", "X-Caller", "a").statusCode()).isEqualTo(429);
            assertThat(count(registry, "tight", "rejected")).isEqualTo(1);
            assertThat(count(registry, "api", "lease_hit")).isEqualTo(beforeRefusal);
        }
    }

    /** The deciding function's calls Valkey runs while open, seen through {@code MONITOR}. */
    private static final class DecidingCalls implements AutoCloseable {

        private final Jedis connection;
        private final List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        private final Thread reader;

        DecidingCalls(ValkeyServer valkey) throws InterruptedException {
            connection = valkey.connect();
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            reader = new Thread(() -> {
                try {
                    connection.monitor(new JedisMonitor() {
                        @Override
                        public void onCommand(String command) {
                            seen.add(command);
                        }

                        @Override
                        public void proceed(redis.clients.jedis.Connection client) {
                            started.countDown();
                            super.proceed(client);
                        }
                    });
                } catch (RuntimeException closed) {
                    // The connection closed: the monitor is over.
                }
            });
            reader.start();
            started.await();
        }

        /** The deciding calls on a key seen so far (every FCALL but the give-backs'). */
        long count(String key) throws InterruptedException {
            // A command is reported once it ran: a marker sent after the last request's calls
            // comes back after them.
            try (Jedis marker = new Jedis(connection.getClient().getHostAndPort())) {
                marker.echo("end-of-calls");
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (seen.stream().noneMatch(c -> c.contains("end-of-calls")) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            synchronized (seen) {
                return seen.stream().filter(c -> c.contains("\"FCALL\"") && !c.contains("_refund\"")
                        && c.contains(key)).count();
            }
        }

        @Override
        public void close() throws InterruptedException {
            connection.getClient().close();
            reader.join(10_000);
        }
    }

    private static double count(MeterRegistry registry, String rule, String outcome) {
        var counter = registry.find("ratelimit.decisions").tag("rule", rule).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }
}
