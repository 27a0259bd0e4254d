package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code cost-from} through the filter on Jetty with a real Valkey: a request is admitted by its
 * estimate and charged, once, what its complete response reported (header or request
 * attribute), sync, async and when the client hangs up mid-body; a refused request is charged
 * nothing; the fields say what was left before the cost was known, in the rule's unit.
 */
@ExtendWith(ValkeyExtension.class)
class CostFromHttpTest {

    private final ValkeyServer valkey;

    CostFromHttpTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
    }

    private JettyApp app() throws Exception {
        return JettyApp.start(JettyApp.settings(valkey.url(),
                "ratelimit.rules", "tokens,rows",
                "ratelimit.rule.tokens.match", "/outcome",
                "ratelimit.rule.tokens.key", "global",
                "ratelimit.rule.tokens.algorithm", "fixed-window",
                "ratelimit.rule.tokens.limit", "1000",
                "ratelimit.rule.tokens.window", "1h",
                "ratelimit.rule.tokens.cost", "10",
                "ratelimit.rule.tokens.cost-from", "header:X-Tokens-Used",
                "ratelimit.rule.tokens.quota-unit", "tokens",
                "ratelimit.rule.rows.match", "/outcome",
                "ratelimit.rule.rows.key", "global",
                "ratelimit.rule.rows.algorithm", "fixed-window",
                "ratelimit.rule.rows.limit", "1000",
                "ratelimit.rule.rows.window", "1h",
                "ratelimit.rule.rows.cost", "10",
                "ratelimit.rule.rows.cost-from", "attribute:tokens"));
    }

    /** Units counted for the rule's one key in Valkey, once that count is {@code expected} (or 10 s passed). */
    private long counted(String rule, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long count;
        do {
            try (Jedis jedis = valkey.connect()) {
                Set<String> keys = jedis.keys("rl:v1:" + rule + ":*");
                count = keys.isEmpty() ? 0 : Long.parseLong(jedis.get(keys.iterator().next()).split(":")[1]);
            }
            if (count == expected) {
                return count;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        return count;
    }

    @Test
    void eachRequestIsChargedWhatItsResponseReportedOnce() throws Exception {
        try (JettyApp app = app()) {
            HttpResponse<String> first = app.get("/outcome?tokens=37");
            assertThat(first.statusCode()).isEqualTo(200);
            // What was left before its cost was known: its estimate taken.
            assertThat(first.headers().firstValue("RateLimit").orElseThrow())
                    .matches("\"tokens\";r=990;t=\\d+, \"rows\";r=990;t=\\d+");
            assertThat(first.headers().firstValue("RateLimit-Policy").orElseThrow())
                    .startsWith("\"tokens\";q=1000;qu=\"tokens\";w=3600, \"rows\";q=1000;w=3600");
            assertThat(counted("tokens", 37)).isEqualTo(37);
            assertThat(counted("rows", 37)).isEqualTo(37);

            app.get("/outcome");                       // reports nothing: its estimate stays
            assertThat(counted("tokens", 47)).isEqualTo(47);
            app.get("/outcome?tokens=0");              // reports 0: all given back
            assertThat(counted("tokens", 47)).isEqualTo(47);
            app.get("/outcome?async=1&tokens=5");      // async: settled when it completes
            assertThat(counted("tokens", 52)).isEqualTo(52);
            assertThat(counted("rows", 52)).isEqualTo(52);
            HttpResponse<String> unreadable = app.get("/outcome?tokens=abc"); // not a number: the estimate stays
            assertThat(unreadable.statusCode()).isEqualTo(200);
            assertThat(counted("tokens", 62)).isEqualTo(62);
            assertThat(counted("rows", 62)).isEqualTo(62);
            // The client hangs up mid-body after the application did its work: charged what it reported.
            assertThat(OutcomeCountingTest.hangUpMidBody(app, "status=200&stream=1&tokens=7")).isEqualTo("HTTP/1.1 200 OK");
            assertThat(counted("tokens", 69)).isEqualTo(69);
            assertThat(counted("rows", 69)).isEqualTo(69);
        }
    }

    /**
     * Two instances of the application on one Valkey, 8 client threads, sync and async responses,
     * some refused: what Valkey counted is exactly what the admitted requests' responses reported.
     */
    @Test
    void twoInstancesCountExactlyWhatTheResponsesReported() throws Exception {
        java.util.concurrent.atomic.AtomicLong reported = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try (JettyApp a = app(); JettyApp b = app()) {
            List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int t = 0; t < 8; t++) {
                JettyApp app = t % 2 == 0 ? a : b;
                java.util.Random random = new java.util.Random(t);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 15; i++) {
                        long tokens = random.nextInt(8);
                        HttpResponse<String> response = app.get("/outcome?tokens=" + tokens
                                + (random.nextBoolean() ? "&async=1" : ""));
                        if (response.statusCode() == 200) {
                            reported.addAndGet(tokens);
                        } else {
                            assertThat(response.statusCode()).isEqualTo(429);
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> future : done) {
                future.get();
            }
            // 120 requests of at most 7 tokens, 8 estimates of 10 in flight: at most 920 of the
            // 1,000, so none is refused. An async one is settled when it completes: waited for.
            assertThat(refused.get()).isZero();
            assertThat(counted("tokens", reported.get())).isEqualTo(reported.get());
            assertThat(counted("rows", reported.get())).isEqualTo(reported.get());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aKeyInDebtIsRefusedAndARefusedRequestIsChargedNothing() throws Exception {
        try (JettyApp app = app()) {
            assertThat(app.get("/outcome?tokens=1500").statusCode()).isEqualTo(200);
            assertThat(counted("tokens", 1500)).isEqualTo(1500);
            HttpResponse<String> refused = app.get("/outcome?tokens=300");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            Thread.sleep(200);
            assertThat(counted("tokens", 1500)).as("nothing charged for the refused request").isEqualTo(1500);
            assertThat(counted("rows", 1500)).isEqualTo(1500);
        }
    }

    @Test
    void aCostSourceOnAnAlgorithmThatCannotOweIsRefusedAtStart() {
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "log",
                "ratelimit.rule.log.algorithm", "sliding-log", "ratelimit.rule.log.limit", "10",
                "ratelimit.rule.log.window", "1m", "ratelimit.rule.log.cost-from", "header:X-Tokens-Used");
        assertThatThrownBy(() -> JettyApp.start(settings).close())
                .hasStackTraceContaining("ratelimit.rule.log.cost-from='header:X-Tokens-Used'");
    }
}
