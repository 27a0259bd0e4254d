package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.refresh} on real Jetty and Valkey with a config source that changes while the
 * app runs: a new limit holds within one refresh and keeps the counts, a new rule starts
 * counting, a bad change is refused whole and the running settings kept.
 */
@ExtendWith(ValkeyExtension.class)
class RefreshTest {

    private static final long REFRESH_MILLIS = 200;

    private final ValkeyServer valkey;

    RefreshTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private static int allowedOf(JettyApp app, String path, String caller, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            allowed += app.get(path, "X-Caller", caller).statusCode() == 200 ? 1 : 0;
        }
        return allowed;
    }

    /**
     * Gives a bad reading time to be read and refused: nothing changes either way, so a slow
     * machine only makes the check weaker, never wrong.
     */
    private static void awaitRefusal() throws InterruptedException {
        Thread.sleep(3 * REFRESH_MILLIS);
    }

    /**
     * Waits for a refresh to apply: until a caller never seen before gets the expected policy on
     * the path (30 s at most, for a busy machine).
     */
    private static void awaitPolicy(JettyApp app, String path, String expected, String... headers) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (int i = 0; !policyOf(app, path, "new-" + i, headers).equals(expected); i++) {
            assertThat(System.nanoTime() - deadline).as("the refresh applied within 30 s").isNegative();
            Thread.sleep(50);
        }
    }

    private static String policyOf(JettyApp app, String path, String caller, String... headers) throws Exception {
        String[] all = new String[headers.length + 2];
        all[0] = "X-Caller";
        all[1] = caller;
        System.arraycopy(headers, 0, all, 2, headers.length);
        return app.get(path, all).headers().firstValue("RateLimit-Policy").orElse("");
    }

    @Test
    void aChangedLimitHoldsWithinOneRefreshKeepsTheCountsAndABadChangeIsRefusedWhole() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "3",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.refresh", REFRESH_MILLIS + "ms",
                // The refresh's own effect, not a remembered rejection, is what is measured.
                "ratelimit.deny-cache.enabled", "false"));
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(allowedOf(app, "/api", "a", 2)).isEqualTo(2);

            source.values.put("ratelimit.rule.api.limit", "5");
            awaitPolicy(app, "/api", "\"api\";q=5;w=3600");
            HttpResponse<String> next = app.get("/api", "X-Caller", "a");
            assertThat(next.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=3600");
            assertThat(next.statusCode()).isEqualTo(200);
            assertThat(allowedOf(app, "/api", "a", 5)).as("5 - 3 used, counts kept").isEqualTo(2);

            // A bad reading: refused whole, including the good change in it.
            source.values.put("ratelimit.rule.api.limit", "lots");
            source.values.put("ratelimit.rule.api.window", "2h");
            awaitRefusal();
            HttpResponse<String> during = app.get("/api", "X-Caller", "b");
            assertThat(during.headers().firstValue("RateLimit-Policy")).as("the running settings")
                    .hasValue("\"api\";q=5;w=3600");
            assertThat(allowedOf(app, "/api", "b", 6)).isEqualTo(4);

            // Fixed, with a new rule: both apply.
            source.values.put("ratelimit.rule.api.limit", "5");
            source.values.put("ratelimit.rules", "api,search");
            source.values.put("ratelimit.rule.search.match", "/search");
            source.values.put("ratelimit.rule.search.limit", "1");
            source.values.put("ratelimit.rule.search.window", "1h");
            source.values.put("ratelimit.rule.search.key", "header:X-Caller");
            // The search rule's last setting is read with the rest: its policy on /search says so.
            awaitPolicy(app, "/search", "\"api\";q=5;w=7200, \"search\";q=1;w=3600");
            assertThat(app.get("/api", "X-Caller", "c").headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api\";q=5;w=7200");
            assertThat(allowedOf(app, "/search", "c", 3)).as("the new rule").isEqualTo(1);
        }
    }

    @Test
    void aPlansLimitChangedInTheSourceHoldsWithinOneRefreshAndKeepsTheCounts() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "gcra", "ratelimit.rule.api.limit", "2",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.pro.limit", "4",
                "ratelimit.trusted-proxies", "127.0.0.1/32",
                "ratelimit.refresh", REFRESH_MILLIS + "ms", "ratelimit.deny-cache.enabled", "false"));
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(allowedOfPlan(app, "p", "pro", 3)).isEqualTo(3);
            source.values.put("ratelimit.rule.api.plan.pro.limit", "6");
            awaitPolicy(app, "/api", "\"api\";q=6;w=3600", "X-Plan", "pro");
            assertThat(app.get("/api", "X-Caller", "q", "X-Plan", "pro").headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api\";q=6;w=3600");
            assertThat(allowedOfPlan(app, "p", "pro", 6)).as("6 - 3 used").isEqualTo(3);
            assertThat(allowedOfPlan(app, "r", "none", 3)).as("callers of no plan keep the rule's").isEqualTo(2);
        }
    }

    /**
     * A reading that puts a plan's limit below the rule's cost is refused whole, as at start-up:
     * requests of that plan could never be allowed (they got a 500).
     */
    @Test
    void aPlanLimitBelowTheCostIsRefusedWhole() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.cost", "2",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.basic.limit", "4",
                "ratelimit.trusted-proxies", "127.0.0.1/32",
                "ratelimit.refresh", REFRESH_MILLIS + "ms", "ratelimit.deny-cache.enabled", "false"));
        try (JettyApp app = JettyApp.start(source)) {
            source.values.put("ratelimit.rule.api.plan.basic.limit", "1");
            source.values.put("ratelimit.rule.api.limit", "20");
            awaitRefusal();
            HttpResponse<String> basic = app.get("/api", "X-Caller", "a", "X-Plan", "basic");
            assertThat(basic.statusCode()).isEqualTo(200);
            assertThat(basic.headers().firstValue("RateLimit-Policy")).as("the running plan").hasValue("\"api\";q=4;w=3600");
            assertThat(app.get("/api", "X-Caller", "b").headers().firstValue("RateLimit-Policy"))
                    .as("the good change in the reading is refused too").hasValue("\"api\";q=10;w=3600");
        }
    }

    private static int allowedOfPlan(JettyApp app, String caller, String plan, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            allowed += app.get("/api", "X-Caller", caller, "X-Plan", plan).statusCode() == 200 ? 1 : 0;
        }
        return allowed;
    }
}
