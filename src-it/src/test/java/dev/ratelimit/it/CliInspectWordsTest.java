package dev.ratelimit.it;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.MapSettingsSource;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether every line {@code ratelimit inspect} and {@code reset} print is true for a support
 * engineer: {@code reset} says the state as {@code inspect} says it (the rule's cost, the plan
 * asked for), a full key has no unit "due", a shadow rule is not said to refuse anyone, and a
 * missing settings file is one plain line. The real JAR against a real Valkey.
 */
@ExtendWith(ValkeyExtension.class)
class CliInspectWordsTest {

    private final ValkeyServer valkey;

    @TempDir
    Path dir;

    CliInspectWordsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void clean() {
        valkey.flushAll();
    }

    /** A rule of cost 3, a rule with plans, a fixed window and a shadow rule. */
    private Map<String, String> settings() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("ratelimit.valkey.url", valkey.url());
        m.put("ratelimit.rules", "costly,planned,window,shadowed");
        m.put("ratelimit.rule.costly.match", "/costly");
        m.put("ratelimit.rule.costly.algorithm", "token-bucket");
        m.put("ratelimit.rule.costly.limit", "10");
        m.put("ratelimit.rule.costly.window", "1h");
        m.put("ratelimit.rule.costly.cost", "3");
        m.put("ratelimit.rule.costly.key", "ip");
        m.put("ratelimit.rule.planned.match", "/api/*");
        m.put("ratelimit.rule.planned.algorithm", "token-bucket");
        m.put("ratelimit.rule.planned.limit", "10");
        m.put("ratelimit.rule.planned.window", "1h");
        m.put("ratelimit.rule.planned.key", "principal-or-ip");
        m.put("ratelimit.rule.planned.plan", "role:pro");
        m.put("ratelimit.rule.planned.plan.pro.limit", "100");
        m.put("ratelimit.rule.window.match", "/window");
        m.put("ratelimit.rule.window.algorithm", "fixed-window");
        m.put("ratelimit.rule.window.limit", "5");
        m.put("ratelimit.rule.window.window", "1h");
        m.put("ratelimit.rule.window.key", "ip");
        m.put("ratelimit.rule.shadowed.match", "/shadowed");
        m.put("ratelimit.rule.shadowed.algorithm", "fixed-window");
        m.put("ratelimit.rule.shadowed.limit", "2");
        m.put("ratelimit.rule.shadowed.window", "1h");
        m.put("ratelimit.rule.shadowed.key", "ip");
        m.put("ratelimit.rule.shadowed.shadow", "true");
        return m;
    }

    private Path file(Map<String, String> settings) throws Exception {
        Path file = dir.resolve("microprofile-config.properties");
        Files.writeString(file, settings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n")), StandardCharsets.UTF_8);
        return file;
    }

    private static RuleSettings rule(Map<String, String> settings, String name) {
        FilterSettings read = SettingsReader.read(new MapSettingsSource(settings));
        return read.rules().stream().filter(r -> r.rule().name().equals(name)).findFirst().orElseThrow();
    }

    private static JsonObject json(CliProcess.Run run) {
        assertThat(run.status()).as(run.err()).isZero();
        return JsonParser.parseString(run.out()).getAsJsonObject();
    }

    @Test
    void resetSaysTheStateJustBeforeAsInspectSaysItForTheRulesCost() throws Exception {
        Map<String, String> settings = settings();
        Path file = file(settings);
        Rule costly = rule(settings, "costly").rule();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            for (int i = 0; i < 3; i++) {
                limiter.acquire(costly, "ip:203.0.113.9", 3); // 1 unit left: a request of 3 is refused
            }
            JsonObject inspect = json(CliProcess.run(dir, "inspect", "--json", "-s", file.toString(), "costly", "203.0.113.9"));
            assertThat(inspect.get("allowed").getAsBoolean()).as("a request of cost 3 with 1 unit left").isFalse();
            JsonObject reset = json(CliProcess.run(dir, "reset", "--json", "-s", file.toString(), "costly", "203.0.113.9"))
                    .getAsJsonObject("removed");
            assertThat(reset.get("allowed").getAsBoolean()).as("reset's 'just before' is what inspect said").isFalse();
        }
    }

    @Test
    void resetSaysTheStateJustBeforeWithThePlanAskedFor() throws Exception {
        Map<String, String> settings = settings();
        Path file = file(settings);
        RuleSettings planned = rule(settings, "planned");
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            for (int i = 0; i < 15; i++) {
                limiter.acquire(planned.plans().get("pro"), "user:bob"); // 85 of 100 left on pro
            }
            JsonObject inspect = json(CliProcess.run(dir, "inspect", "--json", "--plan", "pro", "-s", file.toString(),
                    "planned", "bob"));
            assertThat(inspect.get("allowed").getAsBoolean()).isTrue();
            assertThat(inspect.get("limit").getAsLong()).isEqualTo(100);
            JsonObject reset = json(CliProcess.run(dir, "reset", "--json", "--plan", "pro", "-s", file.toString(),
                    "planned", "bob")).getAsJsonObject("removed");
            assertThat(reset.get("limit").getAsLong()).as("reset --plan pro decides with pro's limit").isEqualTo(100);
            assertThat(reset.get("allowed").getAsBoolean()).as("bob was not refused on pro").isTrue();
            CliProcess.Run own = CliProcess.run(dir, "inspect", "-s", file.toString(), "planned", "bob");
            assertThat(own.out()).as(own.err()).contains("(decided with the rule's own limit; its plans pro decide with "
                    + "theirs: --plan P)");
        }
    }

    @Test
    void aFixedWindowKeyWithItsWholeQuotaHasNoUnitDue() throws Exception {
        Path file = file(settings());
        CliProcess.Run run = CliProcess.run(dir, "inspect", "-s", file.toString(), "window", "203.0.113.10");
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("5 of 5 remaining").contains("full again now")
                .contains("next unit none due (full)");
        JsonObject json = json(CliProcess.run(dir, "inspect", "--json", "-s", file.toString(), "window", "203.0.113.10"));
        assertThat(json.get("nextUnitMs").getAsLong()).as("nothing is due of a full quota").isZero();
    }

    @Test
    void aShadowRuleOverItsLimitIsNotSaidToRejectTheRequest() throws Exception {
        Map<String, String> settings = settings();
        Path file = file(settings);
        Rule shadowed = rule(settings, "shadowed").rule();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            for (int i = 0; i < 3; i++) {
                limiter.acquire(shadowed, "ip:203.0.113.11");
            }
        }
        CliProcess.Run run = CliProcess.run(dir, "inspect", "-s", file.toString(), "shadowed", "203.0.113.11");
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).as("a shadow rule never refuses: the request passes").doesNotContain("rejected now")
                .contains("shadow");
    }

    /**
     * A user name that is not ASCII, typed where the locale is {@code C} (a container, cron, an
     * ssh session without a locale): the JVM decodes the argument to replacement characters,
     * whose key is another user's. Saying "nothing to remove" of a locked-out user would be a lie.
     */
    @Test
    void aValueTheLocaleCannotDecodeIsRefusedNotTakenForAnotherKey() throws Exception {
        Map<String, String> settings = settings();
        settings.put("ratelimit.rules", "window");
        settings.keySet().removeIf(name -> name.startsWith("ratelimit.rule.") && !name.startsWith("ratelimit.rule.window."));
        settings.put("ratelimit.rule.window.key", "param:username");
        Path file = file(settings);
        Rule window = rule(settings, "window").rule();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            limiter.acquire(window, "param.username:" + dev.ratelimit.internal.KeyValues.safe("J\u00f6rg"));
        }
        CliProcess.Run run = CliProcess.run(dir, Map.of("LC_ALL", "C", "LANG", "C"), java.util.List.of(),
                "reset", "-s", file.toString(), "window", "J\u00f6rg");
        assertThat(run.out()).as("not another key's 'nothing to remove'").doesNotContain("nothing to remove");
        assertThat(run.status()).as(run.out()).isEqualTo(1);
        assertThat(run.err().lines().count()).as(run.err()).isEqualTo(1);
        assertThat(run.err()).contains("UTF-8");
    }

    /**
     * The library's warnings (a rule configured but not listed, a state the algorithm cannot
     * read) reach a support engineer's terminal as lines of the tool, not as a logger's two-line
     * records with a timestamp and a Java method name.
     */
    @Test
    void theLibrarysWarningsAreLinesOfTheToolNotLoggerRecords() throws Exception {
        Map<String, String> settings = settings();
        settings.put("ratelimit.rules", "window"); // costly, planned and shadowed configured but not listed
        Path file = file(settings);
        try (redis.clients.jedis.Jedis jedis = valkey.connect()) {
            jedis.set("rl:v1:window:fixed-window:{ip:203.0.113.12}", "not a count");
        }
        CliProcess.Run run = CliProcess.run(dir, "inspect", "-s", file.toString(), "window", "203.0.113.12");
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("unreadable by the rule's algorithm");
        assertThat(run.err()).contains("Rule 'costly' is configured").doesNotContain("GuardedCalls")
                .doesNotContain("UnreadSettings");
        assertThat(run.err().lines()).isNotEmpty().allSatisfy(line -> assertThat(line).startsWith("ratelimit: "));
    }

    @Test
    void aMissingSettingsFileIsOnePlainLine() throws Exception {
        CliProcess.Run run = CliProcess.run(dir, "inspect", "-s", dir.resolve("missing.properties").toString(), "login", "a");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err().strip()).isEqualTo("ratelimit inspect: cannot read the settings file "
                + dir.resolve("missing.properties").toAbsolutePath());
    }
}
