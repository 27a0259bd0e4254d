package dev.ratelimit.it;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
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
        // A lease longer than the test: none goes back meanwhile. Every request a lease did not
        // serve made a function call; the others are leases taken ahead, beside served requests.
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "token-bucket", "ratelimit.rule.api.limit", "1000",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.local-lease", "8", "ratelimit.rule.api.local-lease-time", "30s");
        int requests = 40;
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(MeterRegistry.class.getName(), registry))) {
            // Another caller first, so that the library is loaded before the calls are counted.
            assertThat(app.get("/", "X-Caller", "warm").statusCode()).isEqualTo(200);
            double warmHits = count(registry, "api", "lease_hit");
            long before = valkey.commandCalls("fcall");
            for (int i = 0; i < requests; i++) {
                assertThat(app.get("/", "X-Caller", "a").statusCode()).isEqualTo(200);
            }
            long calls = valkey.commandCalls("fcall") - before;
            assertThat(calls).as("function calls for " + requests + " requests").isBetween(1L, requests - 1L);
            assertThat(warmHits).isZero();
            assertThat(count(registry, "api", "allowed")).isEqualTo(requests + 1);
            double hits = count(registry, "api", "lease_hit");
            assertThat(hits).as("requests served without a call, of %d with %d calls", requests, calls)
                    .isBetween((double) requests - calls, requests - 1.0).isGreaterThanOrEqualTo(requests / 2.0);
            assertThat(registry.scrape()).contains("ratelimit_decisions_total{outcome=\"lease_hit\",rule=\"api\"} "
                    + hits);
        }
    }

    private static double count(MeterRegistry registry, String rule, String outcome) {
        var counter = registry.find("ratelimit.decisions").tag("rule", rule).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }
}
