package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request whose rules are decided apart (one by Valkey, one by its {@code local} policy because
 * its state in Valkey cannot be read) and rejected by one of them: the other gives back what it
 * took before the 429 is written, so the fields must describe the state after that, not the units
 * that went back. Otherwise the client is told {@code r} units remain within {@code t} when more
 * do (draft-11 §4.1: {@code r} is what can be taken within {@code t}).
 */
@ExtendWith(ValkeyExtension.class)
class GivenBackFieldsTest {

    private final ValkeyServer valkey;

    GivenBackFieldsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void aRuleThatGaveItsUnitsBackAnnouncesTheRoomItHas() throws Exception {
        // Promise 1: within t no more than r units can be used (r of a 429 whose other rule was given back).
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api,bad",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "5",
                "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.bad.match", "/bad/*", "ratelimit.rule.bad.algorithm", "sliding-log",
                "ratelimit.rule.bad.limit", "100", "ratelimit.rule.bad.window", "1h",
                "ratelimit.rule.bad.on-failure", "local", "ratelimit.rule.bad.local-limit", "1",
                "ratelimit.deny-cache.enabled", "false");
        try (JettyApp app = JettyApp.start(settings); Jedis inspect = valkey.connect()) {
            assertThat(app.get("/bad/x").statusCode()).isEqualTo(200);
            Set<String> keys = inspect.keys("rl:v1:bad:*");
            assertThat(keys).hasSize(1);
            // Unreadable from now on: the bad rule falls to its local policy, the api rule stays on Valkey.
            inspect.set(keys.iterator().next(), "not a sorted set");
            assertThat(app.get("/bad/x").statusCode()).as("local 1 of 1, api 2 of 5").isEqualTo(200);
            HttpResponse<String> rejected = app.get("/bad/x");
            assertThat(rejected.statusCode()).as("the local limit of 1 reached").isEqualTo(429);
            ClientFields.Announced api = ClientFields.draft11(rejected).get(0);
            assertThat(api.name()).isEqualTo("api");

            int allowed = 0;
            while (allowed < 10 && app.get("/").statusCode() == 200) {
                allowed++;
            }
            assertThat(allowed).as("requests allowed by api right after the 429 said r=%s;t=%s", api.r(), api.t())
                    .isLessThanOrEqualTo((int) api.r());
        }
    }

    /**
     * The same split, with the Valkey rule counting rejections: the rejection by the local rule
     * charged it its last unit, which it keeps. The same request is then refused by it until its
     * t, so the 429's Retry-After must not come sooner (README: "the moment every enforcing rule,
     * including a count-rejected rule the rejection charged, allows the same request again").
     */
    @Test
    void aCountRejectedRuleChargedBesideALocalRejectionIsWaitedFor() throws Exception {
        // Promise 2: a 429's Retry-After never precedes the t of a rule that refuses the same request (r = 0).
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "lock,bad",
                "ratelimit.rule.lock.algorithm", "sliding-log", "ratelimit.rule.lock.limit", "3",
                "ratelimit.rule.lock.window", "1h", "ratelimit.rule.lock.count-rejected", "true",
                "ratelimit.rule.bad.match", "/bad/*", "ratelimit.rule.bad.algorithm", "sliding-log",
                "ratelimit.rule.bad.limit", "100", "ratelimit.rule.bad.window", "1m",
                "ratelimit.rule.bad.on-failure", "local", "ratelimit.rule.bad.local-limit", "1");
        try (JettyApp app = JettyApp.start(settings); Jedis inspect = valkey.connect()) {
            assertThat(app.get("/bad/x").statusCode()).isEqualTo(200);
            Set<String> keys = inspect.keys("rl:v1:bad:*");
            assertThat(keys).hasSize(1);
            inspect.set(keys.iterator().next(), "not a sorted set");
            assertThat(app.get("/bad/x").statusCode()).as("local 1 of 1, lock 2 of 3").isEqualTo(200);
            HttpResponse<String> rejected = app.get("/bad/x");
            assertThat(rejected.statusCode()).as("the local limit of 1 reached").isEqualTo(429);
            long retryAfter = ClientFields.item(rejected, "Retry-After");
            for (ClientFields.Announced rule : ClientFields.draft11(rejected)) {
                if (rule.r() == 0) {
                    assertThat(retryAfter).as("Retry-After beside %s, which refuses the same request until its t",
                            rule).isGreaterThanOrEqualTo(rule.t());
                }
            }
        }
    }
}
