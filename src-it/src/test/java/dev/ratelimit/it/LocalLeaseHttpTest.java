package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local leases set in the filter's settings, over real HTTP on Jetty and a real Valkey: a
 * client hammering one key costs few calls, is held to the limit, and every response's
 * {@code r} counts down as it would without leases.
 */
@ExtendWith(ValkeyExtension.class)
class LocalLeaseHttpTest {

    private final ValkeyServer valkey;

    LocalLeaseHttpTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
        try (Jedis jedis = valkey.connect()) {
            jedis.configResetStat();
        }
    }

    @Test
    void aHotClientIsHeldToTheLimitWithFewCalls() throws Exception {
        Map<String, String> settings = JettyApp.settings(valkey.url(),
                "ratelimit.rule.api.match", "/api/*", "ratelimit.rule.api.algorithm", "fixed-window",
                "ratelimit.rule.api.limit", "60", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.local-lease", "16", "ratelimit.rule.api.local-lease-time", "10s");
        settings.put("ratelimit.rules", "api");
        long allowed = 0;
        long previous = Long.MAX_VALUE;
        long hourBefore = System.currentTimeMillis() / 3_600_000;
        try (JettyApp app = JettyApp.start(settings)) {
            for (int i = 0; i < 80; i++) {
                HttpResponse<String> response = app.get("/api/hello");
                if (response.statusCode() == 200) {
                    allowed++;
                    List<StructuredFields.Item> state = StructuredFields.parseList(
                            response.headers().firstValue("RateLimit").orElseThrow());
                    long remaining = state.get(0).param("r");
                    assertThat(remaining).as("r after request " + i).isLessThan(previous);
                    previous = remaining;
                } else {
                    assertThat(response.statusCode()).isEqualTo(429);
                }
            }
        }
        if (System.currentTimeMillis() / 3_600_000 == hourBefore) {
            // One window: exactly its limit (the instance's own lease serves its own requests).
            assertThat(allowed).as("allowed of 80 asked, limit 60 per hour").isEqualTo(60);
        } else {
            assertThat(allowed).as("allowed of 80 asked across an hour's end").isLessThanOrEqualTo(120);
        }
        try (Jedis jedis = valkey.connect()) {
            String stats = jedis.info("commandstats");
            long calls = stats.lines().filter(line -> line.startsWith("cmdstat_fcall:")).findFirst()
                    .map(line -> Long.parseLong(line.replaceAll(".*calls=(\\d+),.*", "$1"))).orElse(0L);
            assertThat(calls).as("function calls for 80 requests").isLessThan(40);
        }
    }
}
