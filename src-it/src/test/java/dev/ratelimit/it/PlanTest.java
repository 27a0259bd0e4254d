package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits per plan on real Jetty and Valkey: callers on different plans get their own limits
 * under one rule, a plan header is believed only from a trusted proxy (from anyone else it is
 * ignored: a client cannot choose the shape its shared state is written in), roles and request
 * attributes choose plans too, and the headers describe the caller's own plan.
 */
@ExtendWith(ValkeyExtension.class)
class PlanTest {

    private final ValkeyServer valkey;

    PlanTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings(String plan, String... more) {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", "2",
                "ratelimit.rule.api.window", "1d", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", plan,
                "ratelimit.rule.api.plan.free.limit", "1",
                "ratelimit.rule.api.plan.pro.limit", "5",
                "ratelimit.rule.api.plan.pro.window", "12h",
                "ratelimit.deny-cache.enabled", "false");
        for (int i = 0; i < more.length; i += 2) {
            m.put(more[i], more[i + 1]);
        }
        return m;
    }

    /** How many of {@code n} requests pass, and the policy the first one announced. */
    private static String[] run(JettyApp app, int n, String... headers) throws Exception {
        int allowed = 0;
        String policy = null;
        for (int i = 0; i < n; i++) {
            HttpResponse<String> response = app.get("/", headers);
            allowed += response.statusCode() == 200 ? 1 : 0;
            if (policy == null) {
                policy = response.headers().firstValue("RateLimit-Policy").orElse("");
            }
        }
        return new String[] {Integer.toString(allowed), policy};
    }

    @Test
    void aPlanHeaderFromATrustedProxyChoosesThePlanAndTheHeadersDescribeIt() throws Exception {
        try (JettyApp app = JettyApp.start(settings("header:X-Plan", "ratelimit.trusted-proxies", "127.0.0.1/32"))) {
            assertThat(run(app, 8, "X-Caller", "a", "X-Plan", "pro")).containsExactly("5", "\"api\";q=5;w=43200");
            assertThat(run(app, 8, "X-Caller", "b", "X-Plan", "free")).containsExactly("1", "\"api\";q=1;w=86400");
            assertThat(run(app, 8, "X-Caller", "c")).as("no plan: the rule's own").containsExactly("2", "\"api\";q=2;w=86400");
            assertThat(run(app, 8, "X-Caller", "d", "X-Plan", "gold")).as("an unknown plan").containsExactly("2",
                    "\"api\";q=2;w=86400");
        }
    }

    @Test
    void aPlanHeaderFromAnyoneElseIsIgnored() throws Exception {
        try (JettyApp app = JettyApp.start(settings("header:X-Plan"))) {
            assertThat(run(app, 8, "X-Caller", "a", "X-Plan", "pro")).as("a client claiming pro")
                    .containsExactly("2", "\"api\";q=2;w=86400");
            assertThat(run(app, 8, "X-Caller", "b", "X-Plan", "free")).as("a client claiming a lower plan")
                    .containsExactly("2", "\"api\";q=2;w=86400");
        }
    }

    /**
     * The attack: every plan shares one state per rule and key, and a write under a
     * smaller plan trims it to that plan's shape. A client that alternates plain requests and a
     * "lower" plan header wiped its own sliding log and got 41 of 61 through a limit of 5.
     */
    @Test
    void aClientCannotWipeItsStateByAlternatingALowerPlanHeader() throws Exception {
        try (JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "5",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.count-rejected", "true",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.basic.limit", "1",
                "ratelimit.deny-cache.enabled", "false"))) {
            int allowed = 0;
            for (int i = 0; i < 61; i++) {
                HttpResponse<String> response = i % 2 == 0 ? app.get("/", "X-Caller", "mallory")
                        : app.get("/", "X-Caller", "mallory", "X-Plan", "basic");
                allowed += response.statusCode() == 200 ? 1 : 0;
            }
            assertThat(allowed).as("the rule's own limit, whatever the client claims").isEqualTo(5);
        }
    }

    /**
     * The other case: a plan of the same rate with a tiny window (1 per 2 s against 30 per
     * minute) raises nothing, yet a write under it drops every entry older than its window, so a
     * client claiming it refilled the rule's log. The pause lets the claimed plan's window pass;
     * the rule's own window is a minute, far longer than the test takes even on a busy machine.
     */
    @Test
    void aClientCannotShortenTheWindowByClaimingATinyWindowPlan() throws Exception {
        try (JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "30",
                "ratelimit.rule.api.window", "60s", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.tiny.limit", "1",
                "ratelimit.rule.api.plan.tiny.window", "2s", "ratelimit.deny-cache.enabled", "false"))) {
            int allowed = 0;
            for (int round = 0; round < 2; round++) {
                allowed += Integer.parseInt(run(app, 30, "X-Caller", "mallory")[0]);
                Thread.sleep(2_100);
                allowed += Integer.parseInt(run(app, 1, "X-Caller", "mallory", "X-Plan", "tiny")[0]);
            }
            assertThat(allowed).as("30 per minute, whatever the client claims").isEqualTo(30);
        }
    }

    @Test
    void rolesAndRequestAttributesChoosePlans() throws Exception {
        try (JettyApp app = JettyApp.start(settings("role:pro,free"))) {
            assertThat(run(app, 8, "X-Caller", "a", "X-Test-User", "alice", "X-Test-Roles", "free,pro")[0])
                    .as("the first listed role the caller has").isEqualTo("5");
            assertThat(run(app, 8, "X-Caller", "b", "X-Test-User", "bob", "X-Test-Roles", "free")[0]).isEqualTo("1");
            assertThat(run(app, 8, "X-Caller", "c", "X-Test-User", "carol")[0]).isEqualTo("2");
        }
        try (JettyApp app = JettyApp.start(settings("attribute:account.plan"))) {
            assertThat(run(app, 8, "X-Caller", "e", "X-Test-Plan-Attribute", "pro")[0]).isEqualTo("5");
            assertThat(run(app, 8, "X-Caller", "f", "X-Test-Plan-Attribute", "free")[0]).isEqualTo("1");
        }
    }

    @Test
    void aCallerWhoChangesPlanKeepsWhatItUsed() throws Exception {
        try (JettyApp app = JettyApp.start(settings("role:pro,free"))) {
            assertThat(run(app, 1, "X-Caller", "g", "X-Test-User", "gina", "X-Test-Roles", "free")[0]).isEqualTo("1");
            // Upgraded: the unit already taken counts against the pro limit (one state per rule and key).
            assertThat(run(app, 8, "X-Caller", "g", "X-Test-User", "gina", "X-Test-Roles", "pro")[0]).isEqualTo("4");
        }
    }

    /**
     * With the deny cache on: a rejection on the free plan is remembered for the free plan's
     * limit only, so the caller who upgrades is decided by the store at once, not turned away
     * for the old limit's retry-after (a day here).
     */
    @Test
    void anUpgradedCallerIsNotHeldToARejectionOfItsOldPlan() throws Exception {
        try (JettyApp app = JettyApp.start(settings("role:pro,free", "ratelimit.deny-cache.enabled", "true"))) {
            assertThat(run(app, 3, "X-Caller", "h", "X-Test-User", "hana", "X-Test-Roles", "free")[0]).isEqualTo("1");
            assertThat(run(app, 8, "X-Caller", "h", "X-Test-User", "hana", "X-Test-Roles", "pro")[0])
                    .as("5 on pro, 1 used").isEqualTo("4");
        }
    }
}
