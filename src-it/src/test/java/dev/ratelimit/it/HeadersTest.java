package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate-limit fields tell the truth: {@code r} never above {@code q}, a reply from the deny
 * cache says what the store said, a local fallback announces the limit it enforces, and the
 * deny cache hides no attempt from a count-rejected rule.
 */
@ExtendWith(ValkeyExtension.class)
class HeadersTest {

    private final ValkeyServer valkey;

    HeadersTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** The README's override example: limit 3 with the example's burst of 5 showed q=3 and r=4. */
    @Test
    void aBurstAboveTheLimitIsTheQuotaWithItsRefillTime() throws Exception {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "token-bucket", "ratelimit.rule.api.limit", "3",
                "ratelimit.rule.api.window", "1m", "ratelimit.rule.api.burst", "5", "ratelimit.headers", "both");
        try (JettyApp app = JettyApp.start(m)) {
            HttpResponse<String> first = app.get("/");
            StructuredFields.Item policy = StructuredFields.parseList(first.headers().firstValue("RateLimit-Policy")
                    .orElseThrow()).get(0);
            StructuredFields.Item state = StructuredFields.parseList(first.headers().firstValue("RateLimit")
                    .orElseThrow()).get(0);
            assertThat(policy.param("q")).isEqualTo(5);
            assertThat(policy.param("w")).as("5 units at 3 a minute").isEqualTo(100);
            assertThat(state.param("r")).isEqualTo(4);
            assertThat(first.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
        }
    }

    /** The review's case: the store said r=1;t=20, the cached reply r=0;t=10. */
    @Test
    void aRejectionFromTheDenyCacheSaysWhatTheStoreSaid() throws Exception {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "3",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.cost", "2", "ratelimit.headers", "both");
        try (JettyApp app = JettyApp.start(m); var inspect = valkey.connect()) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            HttpResponse<String> fromStore = app.get("/");
            long callsBefore = scriptCalls(inspect);
            HttpResponse<String> fromCache = app.get("/");
            assertThat(scriptCalls(inspect)).as("answered without Valkey").isEqualTo(callsBefore);
            for (HttpResponse<String> response : List.of(fromStore, fromCache)) {
                assertThat(response.statusCode()).isEqualTo(429);
                // Sent with its length in one write, not chunked: a hammering client costs little.
                assertThat(response.headers().firstValue("Content-Length"))
                        .hasValue(Integer.toString(response.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
                assertThat(response.headers().firstValue("Transfer-Encoding")).isEmpty();
            }
            assertThat(fromCache.headers().firstValue("RateLimit")).isEqualTo(fromStore.headers().firstValue("RateLimit"))
                    .hasValue("\"api\";r=1;t=3600");
            assertThat(fromCache.headers().firstValue("X-RateLimit-Reset"))
                    .isEqualTo(fromStore.headers().firstValue("X-RateLimit-Reset"));
            assertThat(fromCache.headers().firstValue("X-RateLimit-Remaining")).hasValue("1");
        }
    }

    private static long scriptCalls(redis.clients.jedis.Jedis inspect) {
        String stats = inspect.info("commandstats");
        long calls = 0;
        for (String line : stats.split("\\r?\\n")) {
            if (line.startsWith("cmdstat_fcall:")) {
                calls += Long.parseLong(line.replaceAll(".*calls=(\\d+).*", "$1"));
            }
        }
        return calls;
    }

    /** During a local fallback the policy describes the local limit, the one being enforced. */
    @Test
    void aLocalFallbackAnnouncesTheLocalLimit() throws Exception {
        Map<String, String> m = JettyApp.settings("redis://127.0.0.1:" + ValkeyServer.freePort(),
                "ratelimit.valkey.timeout", "100ms", "ratelimit.valkey.connect-timeout", "100ms",
                "ratelimit.rules", "api", "ratelimit.rule.api.limit", "1000", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.on-failure", "local", "ratelimit.rule.api.local-limit", "2");
        try (JettyApp app = JettyApp.start(m)) {
            HttpResponse<String> first = app.get("/");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=2;w=3600");
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            assertThat(app.get("/").statusCode()).isEqualTo(429);
        }
    }

    /** The review's case: burst rejects, lockout counts every attempt, with and without the deny cache. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void theDenyCacheHidesNoAttemptFromACountRejectedRule(boolean denyCache) throws Exception {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "burst,lockout",
                "ratelimit.deny-cache.enabled", Boolean.toString(denyCache),
                "ratelimit.rule.burst.algorithm", "fixed-window", "ratelimit.rule.burst.limit", "1",
                "ratelimit.rule.burst.window", "1h",
                "ratelimit.rule.lockout.algorithm", "sliding-log", "ratelimit.rule.lockout.limit", "10",
                "ratelimit.rule.lockout.window", "1h", "ratelimit.rule.lockout.count-rejected", "true");
        try (JettyApp app = JettyApp.start(m)) {
            HttpResponse<String> last = null;
            for (int i = 0; i < 6; i++) {
                last = app.get("/");
                assertThat(last.statusCode()).isEqualTo(i == 0 ? 200 : 429);
            }
            StructuredFields.Item lockout = StructuredFields.parseList(last.headers().firstValue("RateLimit")
                    .orElseThrow()).get(1);
            assertThat(lockout.value()).isEqualTo("lockout");
            assertThat(lockout.param("r")).as("attempts recorded: 6 of 10").isEqualTo(4);
        }
    }
}
