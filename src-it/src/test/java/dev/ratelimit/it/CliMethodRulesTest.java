package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line on settings with route rules and method rules. */
class CliMethodRulesTest {

    private static final String SETTINGS = String.join("\n",
            "ratelimit.rules=r1,m1",
            "ratelimit.rule.r1.match=/e/*", "ratelimit.rule.r1.limit=3", "ratelimit.rule.r1.window=1h",
            "ratelimit.rule.m1.scope=method", "ratelimit.rule.m1.limit=1", "ratelimit.rule.m1.window=1h",
            "ratelimit.rule.m1.key=param:user", "");

    /** explain names a method rule as one the filter never applies (held). */
    @Test
    void explainSaysAMethodRuleIsNotTheFilters(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("s.properties"), SETTINGS);
        CliProcess.Run run = CliProcess.run(dir, "explain", file.toString(), "GET", "/e/m/alice?user=alice");
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("r1: matches", "m1: no match: a method rule (scope=method)");
    }

    /**
     * README, check: "Each rule's line says everything that changes what it refuses". A method
     * rule's line must not read as a rule the filter applies to every path and method.
     */
    @Test
    void checkSaysARuleIsAMethodRule(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("s.properties"), SETTINGS);
        CliProcess.Run run = CliProcess.run(dir, "check", file.toString());
        assertThat(run.status()).as(run.err()).isZero();
        String m1 = Arrays.stream(run.out().split("\n")).filter(l -> l.trim().startsWith("m1:")).findFirst().orElseThrow();
        assertThat(m1).as(run.out()).doesNotContain("any method [/*]").contains("method");
        assertThat(m1).as(run.out()).containsAnyOf("scope=method", "@RateLimited");
    }
}
