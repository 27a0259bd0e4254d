package dev.ratelimit.it;

import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README (ratelimit.refresh): a reading that differs is applied whole, plans included, and a bad
 * one is refused. Some settings are found by their names only (a plan under
 * {@code <rule>.plan.<plan>.}, a property nothing reads): a refresh must see names that appear in
 * the source after the start, though MicroProfile Config implementations may remember the names
 * they listed first (SmallRye does, with {@code getLatestPropertyNames} for the names now).
 */
class RefreshNewNamesTest {

    private static ValkeyServer valkey;

    @BeforeAll
    static void startValkey() {
        valkey = ValkeyServer.startProcess(List.of());
    }

    @AfterAll
    static void stopValkey() {
        if (valkey != null) {
            valkey.close();
        }
    }

    @Test
    void aPlanAddedToTheSourceAppliesAtTheRefresh() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.limit", "2", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.pro.limit", "4",
                "ratelimit.trusted-proxies", "127.0.0.1/32",
                "ratelimit.refresh", "100ms", "ratelimit.deny-cache.enabled", "false"));
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(policy(app, "a", "team")).as("no plan team yet: the rule's limit").isEqualTo("\"api\";q=2;w=3600");
            source.values.put("ratelimit.rule.api.plan.team.limit", "7");
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            String seen = policy(app, "b", "team");
            for (int i = 0; !seen.equals("\"api\";q=7;w=3600") && System.nanoTime() < deadline; i++) {
                Thread.sleep(100);
                seen = policy(app, "c" + i, "team");
            }
            assertThat(seen).as("the policy of plan team 5 s after it was added to the source")
                    .isEqualTo("\"api\";q=7;w=3600");
        }
    }

    @Test
    void aTypoAddedToTheSourceIsRefusedAtTheRefresh() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.limit", "2", "ratelimit.rule.api.window", "1h",
                "ratelimit.refresh", "100ms"));
        try (CapturedLogs logs = CapturedLogs.of("dev.ratelimit.servlet.SettingsRefresh");
             JettyApp app = JettyApp.start(source)) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            source.values.put("ratelimit.rule.api.limt", "50");
            source.values.put("ratelimit.rule.api.window", "2h"); // a change, refused with the typo
            Thread.sleep(1_000);
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(logs.records().stream().map(CapturedLogs::message).filter(m -> m.contains("limt")).toList())
                    .as("the refusal naming the typo").hasSize(1);
            softly.assertThat(app.get("/").headers().firstValue("RateLimit-Policy"))
                    .as("the running settings kept, the window change refused with the typo")
                    .hasValue("\"api\";q=2;w=3600");
            softly.assertAll();
        }
    }

    private static String policy(JettyApp app, String caller, String plan) throws Exception {
        return app.get("/api", "X-Caller", caller, "X-Plan", plan).headers().firstValue("RateLimit-Policy").orElse("");
    }
}
