package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The filter over real HTTP: real Jetty, real MicroProfile Config, real Valkey. */
@ExtendWith(ValkeyExtension.class)
class HttpFilterTest {

    private final ValkeyServer valkey;

    HttpFilterTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings(String rules, String... pairs) {
        Map<String, String> m = JettyApp.settings(valkey.url(), pairs);
        m.put("ratelimit.rules", rules);
        return m;
    }

    @Test
    void everyMatchedResponseCarriesValidHeadersWithTheRightNumbers() throws Exception {
        try (JettyApp app = JettyApp.start(settings("api,search",
                "ratelimit.rule.api.match", "/api/*", "ratelimit.rule.api.algorithm", "token-bucket",
                "ratelimit.rule.api.limit", "5", "ratelimit.rule.api.window", "1m",
                "ratelimit.rule.search.match", "/api/search", "ratelimit.rule.search.algorithm", "sliding-log",
                "ratelimit.rule.search.limit", "3", "ratelimit.rule.search.window", "30s",
                "ratelimit.headers", "both"))) {
            for (int i = 1; i <= 3; i++) {
                HttpResponse<String> response = app.get("/api/search");
                assertThat(response.statusCode()).isEqualTo(200);
                List<StructuredFields.Item> policy = StructuredFields.parseList(header(response, "RateLimit-Policy"));
                List<StructuredFields.Item> state = StructuredFields.parseList(header(response, "RateLimit"));
                assertThat(policy).extracting(StructuredFields.Item::value).containsExactly("api", "search");
                assertThat(policy.get(0).param("q")).isEqualTo(5);
                assertThat(policy.get(0).param("w")).isEqualTo(60);
                assertThat(policy.get(1).param("q")).isEqualTo(3);
                assertThat(policy.get(1).param("w")).isEqualTo(30);
                assertThat(state.get(0).param("r")).isEqualTo(5 - i);
                assertThat(state.get(1).param("r")).isEqualTo(3 - i);
                assertThat(state.get(0).param("t")).isBetween(1L, 60L);
                assertThat(state.get(1).param("t")).isBetween(1L, 30L);
                // Legacy fields describe the rule closest to its limit.
                assertThat(header(response, "X-RateLimit-Limit")).isEqualTo("3");
                assertThat(header(response, "X-RateLimit-Remaining")).isEqualTo(Long.toString(3 - i));
            }
            HttpResponse<String> unmatched = app.get("/other");
            assertThat(unmatched.statusCode()).isEqualTo(200);
            assertThat(unmatched.headers().firstValue("RateLimit")).isEmpty();
        }
    }

    @Test
    void theSixthLoginForOneUserIsRejectedUntilRetryAfter() throws Exception {
        try (JettyApp app = JettyApp.start(settings("login",
                "ratelimit.rule.login.match", "/login", "ratelimit.rule.login.methods", "POST",
                "ratelimit.rule.login.algorithm", "sliding-log", "ratelimit.rule.login.limit", "5",
                "ratelimit.rule.login.window", "2s", "ratelimit.rule.login.key", "param:username",
                "ratelimit.rule.login.lowercase-key", "true"))) {
            for (int i = 0; i < 5; i++) {
                assertThat(app.postForm("/login", "username=alice").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> sixth = app.postForm("/login", "username=Alice");
            assertThat(sixth.statusCode()).isEqualTo(429);
            assertThat(header(sixth, "Content-Type")).startsWith("application/problem+json");
            long retryAfter = Long.parseLong(header(sixth, "Retry-After"));
            assertThat(retryAfter).isBetween(1L, 2L);
            assertThat(sixth.body()).contains("\"status\":429").contains("\"rule\":\"login\"")
                    .contains("\"title\":\"Too Many Requests\"").contains("\"retryAfter\":" + retryAfter);
            assertThat(StructuredFields.parseList(header(sixth, "RateLimit")).get(0).param("r")).isZero();

            // Another user, and a GET, are not affected.
            assertThat(app.postForm("/login", "username=bob").statusCode()).isEqualTo(200);
            assertThat(app.get("/login").statusCode()).isEqualTo(200);

            Thread.sleep(retryAfter * 1000);
            assertThat(app.postForm("/login", "username=alice").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void forwardedForIsIgnoredFromAnUntrustedPeerAndHonoredFromATrustedProxy() throws Exception {
        String[] rule = {"ratelimit.rule.ip.limit", "2", "ratelimit.rule.ip.window", "1m", "ratelimit.rule.ip.key", "ip"};
        try (JettyApp untrusting = JettyApp.start(settings("ip", rule))) {
            assertThat(untrusting.get("/", "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
            assertThat(untrusting.get("/", "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(200);
            assertThat(untrusting.get("/", "X-Forwarded-For", "203.0.113.3").statusCode())
                    .as("a header from an untrusted peer cannot make a new client").isEqualTo(429);
        }
        valkey.flushAll();
        Map<String, String> trusting = settings("ip", rule);
        trusting.put("ratelimit.trusted-proxies", "127.0.0.1/32, ::1");
        try (JettyApp app = JettyApp.start(trusting)) {
            for (String client : new String[] {"203.0.113.1", "203.0.113.2"}) {
                assertThat(app.get("/", "X-Forwarded-For", "198.51.100.99, " + client).statusCode()).isEqualTo(200);
                assertThat(app.get("/", "X-Forwarded-For", client).statusCode()).isEqualTo(200);
                assertThat(app.get("/", "X-Forwarded-For", client).statusCode()).isEqualTo(429);
            }
        }
    }

    @Test
    void principalKeysAndPrincipalOrIpFallsBackToTheAddress() throws Exception {
        try (JettyApp app = JettyApp.start(settings("user,any",
                "ratelimit.rule.user.match", "/user/*", "ratelimit.rule.user.limit", "2",
                "ratelimit.rule.user.window", "1m", "ratelimit.rule.user.key", "principal",
                "ratelimit.rule.any.match", "/any/*", "ratelimit.rule.any.limit", "2",
                "ratelimit.rule.any.window", "1m", "ratelimit.rule.any.key", "principal-or-ip"))) {
            assertThat(statuses(app, "/user/x", 3, "X-Test-User", "alice")).containsExactly(200, 200, 429);
            assertThat(statuses(app, "/user/x", 3, "X-Test-User", "bob")).containsExactly(200, 200, 429);
            // No principal: the principal rule does not count the request at all.
            HttpResponse<String> anonymous = app.get("/user/x");
            assertThat(anonymous.statusCode()).isEqualTo(200);
            assertThat(anonymous.headers().firstValue("RateLimit")).isEmpty();
            assertThat(statuses(app, "/any/x", 3)).containsExactly(200, 200, 429);
            assertThat(statuses(app, "/any/x", 3, "X-Test-User", "carol")).containsExactly(200, 200, 429);
        }
    }

    @Test
    void twoServersSharingOneValkeyEnforceOneCombinedLimit() throws Exception {
        Map<String, String> shared = settings("api", "ratelimit.rule.api.algorithm", "gcra",
                "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global");
        try (JettyApp first = JettyApp.start(shared); JettyApp second = JettyApp.start(shared)) {
            int allowed = 0;
            for (int i = 0; i < 20; i++) {
                JettyApp app = i % 2 == 0 ? first : second;
                if (app.get("/api").statusCode() == 200) {
                    allowed++;
                }
            }
            assertThat(allowed).as("one limit of 10 across both servers, not 10 each").isEqualTo(10);
        }
    }

    @Test
    void badSettingsFailStartupNamingTheProperty() {
        Map<String, String> bad = settings("api", "ratelimit.rule.api.limit", "-1", "ratelimit.rule.api.window", "1m",
                "ratelimit.rule.api.algorithm", "leaky-bucket");
        assertThatThrownBy(() -> JettyApp.start(bad).close())
                .satisfies(e -> assertThat(causes(e))
                        .contains("ratelimit.rule.api.limit='-1'")
                        .contains("ratelimit.rule.api.algorithm='leaky-bucket'"));
    }

    @Test
    void environmentVariablesOverrideTheSettingsFile() throws Exception {
        Map<String, String> file = settings("api", "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m");
        try (JettyApp app = JettyApp.start(file, Map.of("RATELIMIT_RULE_API_LIMIT", "2"))) {
            assertThat(statuses(app, "/", 3)).containsExactly(200, 200, 429);
        }
    }

    @Test
    void aShadowRuleNeverBlocks() throws Exception {
        try (JettyApp app = JettyApp.start(settings("trial", "ratelimit.rule.trial.limit", "1",
                "ratelimit.rule.trial.window", "1m", "ratelimit.rule.trial.shadow", "true"))) {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> response = app.get("/");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(StructuredFields.parseList(header(response, "RateLimit")).get(0).param("r")).isZero();
            }
        }
    }

    @Test
    void whenValkeyIsUnreachableEachRuleFollowsItsPolicy() throws Exception {
        Map<String, String> m = settings("open,closed,local",
                "ratelimit.valkey.timeout", "50ms", "ratelimit.valkey.connect-timeout", "50ms",
                "ratelimit.rule.open.match", "/open", "ratelimit.rule.open.limit", "1", "ratelimit.rule.open.window", "1m",
                "ratelimit.rule.closed.match", "/closed", "ratelimit.rule.closed.limit", "1",
                "ratelimit.rule.closed.window", "1m", "ratelimit.rule.closed.on-failure", "closed",
                "ratelimit.rule.local.match", "/local", "ratelimit.rule.local.limit", "2",
                "ratelimit.rule.local.window", "1m", "ratelimit.rule.local.on-failure", "local");
        m.put("ratelimit.valkey.url", "redis://127.0.0.1:" + ValkeyServer.freePort());
        try (JettyApp app = JettyApp.start(m)) {
            assertThat(statuses(app, "/open", 3)).containsExactly(200, 200, 200);
            HttpResponse<String> closed = app.get("/closed");
            assertThat(closed.statusCode()).isEqualTo(503);
            assertThat(header(closed, "Retry-After")).isEqualTo("1");
            assertThat(closed.body()).contains("\"status\":503").contains("\"rule\":\"closed\"");
            assertThat(statuses(app, "/local", 3)).containsExactly(200, 200, 429);
        }
    }

    private static List<Integer> statuses(JettyApp app, String path, int n, String... headers) throws Exception {
        Integer[] statuses = new Integer[n];
        for (int i = 0; i < n; i++) {
            statuses[i] = app.get(path, headers).statusCode();
        }
        return List.of(statuses);
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name)
                .orElseThrow(() -> new AssertionError("no " + name + " header in " + response.headers().map()));
    }

    private static String causes(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t).append('\n');
            for (Throwable s : t.getSuppressed()) {
                all.append(s).append('\n');
            }
        }
        return all.toString();
    }

}
