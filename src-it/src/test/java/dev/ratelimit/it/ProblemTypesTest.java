package dev.ratelimit.it;

import org.json.JSONObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The 429's problem body names every rule that rejected, by the names the fields use, and not
 * a shadow rule that would have: it did not reject.
 */
@ExtendWith(ValkeyExtension.class)
class ProblemTypesTest {

    private final ValkeyServer valkey;

    ProblemTypesTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void violatedPoliciesAreEveryEnforcingRuleThatRejected() throws Exception {
        try (JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "first,spare,second,watch",
                "ratelimit.rule.first.algorithm", "sliding-log", "ratelimit.rule.first.limit", "1",
                "ratelimit.rule.first.window", "1h",
                "ratelimit.rule.spare.algorithm", "fixed-window", "ratelimit.rule.spare.limit", "100",
                "ratelimit.rule.spare.window", "1h",
                "ratelimit.rule.second.algorithm", "fixed-window", "ratelimit.rule.second.limit", "1",
                "ratelimit.rule.second.window", "1m",
                "ratelimit.rule.watch.algorithm", "fixed-window", "ratelimit.rule.watch.limit", "1",
                "ratelimit.rule.watch.window", "1h", "ratelimit.rule.watch.shadow", "true"))) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            HttpResponse<String> rejected = app.get("/");
            assertThat(rejected.statusCode()).isEqualTo(429);
            JSONObject problem = ClientFields.problem(rejected);
            assertThat(problem.getString("type"))
                    .isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
            assertThat(ClientFields.violatedPolicies(problem)).as("not spare (room left), not watch (shadow)")
                    .containsExactly("first", "second");
            List<ClientFields.Announced> announced = ClientFields.draft11(rejected);
            assertThat(announced).extracting(ClientFields.Announced::name).containsAll(ClientFields.violatedPolicies(problem));
            assertThat(announced.get(3).r()).as("watch would have rejected").isZero();
            // The filter's own members stay beside the draft's: the rule waited for longest. First
            // is a sliding log of an hour (a wait of about an hour, whenever the test runs); second
            // a window of a minute aligned to the epoch, which always ends within the minute.
            assertThat(problem.getString("rule")).isEqualTo("first");
            assertThat(problem.getLong("retryAfter")).isEqualTo(ClientFields.item(rejected, "Retry-After"));
        }
    }
}
