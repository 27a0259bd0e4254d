package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits per plan on real Jetty and Valkey: callers on different plans get their own limits
 * under one rule, a plan header is believed only from a trusted proxy (from anyone else it can
 * lower a limit, never raise it), roles and request attributes choose plans too, and the
 * headers describe the caller's own plan.
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
    void aPlanHeaderFromAnyoneElseCanLowerALimitButNeverRaiseIt() throws Exception {
        try (JettyApp app = JettyApp.start(settings("header:X-Plan"))) {
            assertThat(run(app, 8, "X-Caller", "a", "X-Plan", "pro")).as("a client claiming pro")
                    .containsExactly("2", "\"api\";q=2;w=86400");
            assertThat(run(app, 8, "X-Caller", "b", "X-Plan", "free")).containsExactly("1", "\"api\";q=1;w=86400");
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
}
