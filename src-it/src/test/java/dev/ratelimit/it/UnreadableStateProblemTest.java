package dev.ratelimit.it;

import org.json.JSONObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The 503 of a {@code closed} rule whose state in Valkey cannot be read names that rule, and not
 * another closed rule of the request that Valkey could have decided: the draft's
 * {@code violated-policies} (README: "the rules whose policy refused") are the rules that could
 * not be checked, not every closed one.
 */
@ExtendWith(ValkeyExtension.class)
class UnreadableStateProblemTest {

    private final ValkeyServer valkey;

    UnreadableStateProblemTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void the503NamesOnlyTheRuleThatCouldNotBeChecked() throws Exception {
        // Promise 3: a 503's violated-policies name the rules whose closed policy refused (that could not be checked).
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "login,api",
                "ratelimit.rule.login.algorithm", "sliding-log", "ratelimit.rule.login.limit", "100",
                "ratelimit.rule.login.window", "1h", "ratelimit.rule.login.on-failure", "closed",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "100",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.on-failure", "closed");
        try (JettyApp app = JettyApp.start(settings); Jedis inspect = valkey.connect()) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            Set<String> keys = inspect.keys("rl:v1:login:*");
            assertThat(keys).hasSize(1);
            inspect.set(keys.iterator().next(), "not a sorted set");
            HttpResponse<String> refused = app.get("/");
            assertThat(refused.statusCode()).isEqualTo(503);
            JSONObject problem = ClientFields.problem(refused);
            assertThat(problem.getString("type"))
                    .isEqualTo("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
            assertThat(ClientFields.violatedPolicies(problem)).as("api's state reads fine").containsExactly("login");
        }
    }
}
