package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 429 answered from the deny cache carries the numbers the store gave, with its times moved
 * on, for the rules whose rejection it replays, and nothing of the request's other rules: the
 * cache answers without asking the store, so it knows nothing new of them, and an item with the
 * old numbers would announce room the store may no longer have (README, the headers section).
 */
@ExtendWith(ValkeyExtension.class)
class DenyCacheFieldsTest {

    private final ValkeyServer valkey;

    DenyCacheFieldsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void aReplayedRejectionDescribesTheRulesItReplays() throws Exception {
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "tight,wide",
                "ratelimit.rule.tight.algorithm", "sliding-log", "ratelimit.rule.tight.limit", "1",
                "ratelimit.rule.tight.window", "1h",
                "ratelimit.rule.wide.algorithm", "sliding-log", "ratelimit.rule.wide.limit", "100",
                "ratelimit.rule.wide.window", "1h", "ratelimit.deny-cache.max-hold", "1m");
        try (JettyApp app = JettyApp.start(settings)) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            HttpResponse<String> fromStore = app.get("/");
            HttpResponse<String> fromCache = app.get("/");
            assertThat(fromStore.statusCode()).isEqualTo(429);
            assertThat(fromCache.statusCode()).isEqualTo(429);
            assertThat(ClientFields.draft11(fromStore)).extracting(ClientFields.Announced::name)
                    .containsExactly("tight", "wide");
            assertThat(ClientFields.draft11(fromCache)).as("the replayed 429's items")
                    .extracting(ClientFields.Announced::name).containsExactly("tight");
            assertThat(ClientFields.draft11(fromCache).get(0).r()).isZero();
            assertThat(fromCache.headers().firstValue("Retry-After")).isPresent();
        }
    }
}
