package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @RateLimited} Jakarta REST methods on Jersey and Jetty 12, against a real Valkey, with
 * no {@code web.xml} and no servlet filter unless a test says: the limits start from the
 * application's settings, and answer as the filter does.
 */
@ExtendWith(ValkeyExtension.class)
class RestAnnotationTest {

    private final ValkeyServer valkey;

    RestAnnotationTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private JakartaApp loginApp(String... more) throws Exception {
        List<String> pairs = new ArrayList<>(List.of("ratelimit.rules", "login", "ratelimit.rule.login.scope", "method",
        "ratelimit.rule.login.limit", "5",
                "ratelimit.rule.login.window", "1h", "ratelimit.rule.login.key", "param:username"));
        pairs.addAll(List.of(more));
        return JakartaApp.start(JakartaApp.settings(valkey.url(), pairs.toArray(String[]::new)), false,
                Resources.Login.class);
    }

    @Test
    void fiveLoginsPerUsernameFromAFormParameterThenTheFiltersOwn429() throws Exception {
        try (JakartaApp app = loginApp()) {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> allowed = app.postForm("/login", "username=alice&password=secret");
                assertThat(allowed.statusCode()).isEqualTo(200);
                // The body was read for the key and put back: the method got its parameters.
                assertThat(allowed.body()).isEqualTo("welcome alice");
                String expected = "\"login\";r=" + (4 - i) + ";";
                assertThat(allowed.headers().firstValue("RateLimit")).hasValueSatisfying(
                        value -> assertThat(value).startsWith(expected));
                assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"login\";q=5;w=3600");
            }
            HttpResponse<String> refused = app.postForm("/login", "username=alice&password=secret");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            assertThat(refused.headers().firstValue("Cache-Control")).hasValue("no-store");
            assertThat(refused.headers().firstValue("RateLimit")).hasValueSatisfying(
                    value -> assertThat(value).startsWith("\"login\";r=0;"));
            assertThat(refused.body()).contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"",
                    "\"status\":429", "\"violated-policies\":[\"login\"]", "\"rule\":\"login\"");
            // Another user name is another key.
            assertThat(app.postForm("/login", "username=bob&password=secret").body()).isEqualTo("welcome bob");
            // The counts are in Valkey, under the filter's key for a param: part.
            assertThat(valkey.connect().keys("*param.username:alice*")).isNotEmpty();
        }
    }

    @Test
    void countWhenCountsOnlyTheResponsesItNames() throws Exception {
        try (JakartaApp app = loginApp("ratelimit.rule.login.count-when", "status:401")) {
            for (int i = 0; i < 10; i++) {
                assertThat(app.postForm("/login", "username=carol&password=secret").statusCode()).isEqualTo(200);
            }
            for (int i = 0; i < 5; i++) {
                assertThat(app.postForm("/login", "username=carol&password=wrong").statusCode()).isEqualTo(401);
            }
            assertThat(app.postForm("/login", "username=carol&password=secret").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aConcurrencyLeaseIsReleasedAfterEachResponse() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "exports",
                "ratelimit.rule.exports.algorithm", "concurrency", "ratelimit.rule.exports.scope", "method",
                "ratelimit.rule.exports.limit", "1"), false,
                Resources.Export.class)) {
            // One at a time, one after another: each gets the one slot the one before released.
            for (int i = 0; i < 5; i++) {
                assertThat(app.get("/export" + (i % 2 == 0 ? "" : "?fail=1")).statusCode()).isEqualTo(i % 2 == 0 ? 200 : 500);
            }
        }
    }

    @Test
    void aPathParameterKeysTheRule() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "account",
                "ratelimit.rule.account.scope", "method",
                "ratelimit.rule.account.limit", "2", "ratelimit.rule.account.window", "1h",
                "ratelimit.rule.account.key", "param:id"), false, Resources.Account.class)) {
            assertThat(app.get("/accounts/7").body()).isEqualTo("account 7");
            assertThat(app.get("/accounts/7").statusCode()).isEqualTo(200);
            assertThat(app.get("/accounts/7").statusCode()).isEqualTo(429);
            assertThat(app.get("/accounts/8").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void theRulesOwnKeyKindsReadTheRequestTheMethodServes() throws Exception {
        // key=ip by default, and no servlet filter: the client address comes from the request itself.
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "2", "ratelimit.rule.api.window", "1h"), false, Resources.Search.class)) {
            assertThat(app.get("/search").statusCode()).isEqualTo(200);
            assertThat(app.get("/search").statusCode()).isEqualTo(200);
            assertThat(app.get("/search").statusCode()).isEqualTo(429);
            assertThat(valkey.connect().keys("*ip:127.0.0.1*")).isNotEmpty();
        }
    }

    @Test
    void aMethodRuleIsLeftToTheMethodByTheServletFilterAndCountedOnce() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "3", "ratelimit.rule.api.window", "1h"), true, Resources.Search.class)) {
            for (int remaining = 2; remaining >= 0; remaining--) {
                HttpResponse<String> allowed = app.get("/search");
                assertThat(allowed.statusCode()).isEqualTo(200);
                String expected = "\"api\";r=" + remaining + ";";
                assertThat(allowed.headers().firstValue("RateLimit")).hasValueSatisfying(
                        value -> assertThat(value).startsWith(expected));
            }
            assertThat(app.get("/search").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void anUnknownRuleFailsTheStartNamingTheMethodAndTheRule() {
        assertThatThrownBy(() -> JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "login",
                "ratelimit.rule.login.scope", "method",
                "ratelimit.rule.login.limit", "5", "ratelimit.rule.login.window", "1h"), false,
                Resources.UnknownRule.class).close())
                .satisfies(e -> assertThat(causes(e)).contains("@RateLimited(\"logni\") on "
                        + Resources.UnknownRule.class.getName() + ".typo names no rule of ratelimit.rules [login]"));
    }

    @Test
    void aKeyParameterTheMethodLacksFailsTheStartNamingBoth() {
        assertThatThrownBy(() -> JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "login",
                "ratelimit.rule.login.scope", "method",
                "ratelimit.rule.login.limit", "5", "ratelimit.rule.login.window", "1h",
                "ratelimit.rule.login.key", "param:username"), false, Resources.UnknownParameter.class).close())
                .satisfies(e -> assertThat(causes(e)).contains("@RateLimited(\"login\") on "
                        + Resources.UnknownParameter.class.getName() + ".login: the rule's key part param:username"));
    }

    /** Every message of an exception and its causes, one text. */
    static String causes(Throwable e) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            text.append(t).append('\n');
        }
        return text.toString();
    }
}
