package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit check FILE}, the real runnable JAR in a process of its own: what the filter
 * would report at deployment, exit status 0 or 1, environment variables over the file.
 */
class CliCheckTest {

    private static final String GOOD = """
            ratelimit.rules=api,login
            ratelimit.rule.api.match=/api/*
            ratelimit.rule.api.algorithm=token-bucket
            ratelimit.rule.api.limit=10
            ratelimit.rule.api.window=1m
            ratelimit.rule.api.burst=5
            ratelimit.rule.api.key=principal-or-ip
            ratelimit.rule.login.match=/login
            ratelimit.rule.login.methods=POST
            ratelimit.rule.login.algorithm=sliding-log
            ratelimit.rule.login.limit=5
            ratelimit.rule.login.window=15m
            ratelimit.rule.login.key=param:username
            ratelimit.rule.login.on-failure=closed
            """;

    @TempDir
    Path dir;

    private record Run(int status, String out, String err) {
    }

    @Test
    void aGoodFileIsValidAndItsRulesAreSaidAsUnderstood() throws Exception {
        Run run = check(file(GOOD), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("valid; 2 rule(s)")
                .contains("api: any method [/api/*], key principal-or-ip, token-bucket 10 per PT1M (burst 5), on-failure open")
                .contains("login: POST [/login], key param:username, sliding-log 5 per PT15M, on-failure closed");
    }

    @Test
    void everyProblemIsReportedNamingThePropertyAndItsValueWithStatus1() throws Exception {
        Run run = check(file(GOOD.replace("limit=10", "limit=-3").replace("algorithm=sliding-log", "algorithm=sliding-logg")),
                Map.of());
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).contains("ratelimit.rule.api.limit='-3'").contains("ratelimit.rule.login.algorithm='sliding-logg'")
                .doesNotContain("\tat ");
    }

    @Test
    void anEnvironmentVariableOverridesTheFileAsInTheContainer() throws Exception {
        Run run = check(file(GOOD), Map.of("RATELIMIT_RULE_API_LIMIT", "lots"));
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).contains("ratelimit.rule.api.limit").contains("lots");
    }

    @Test
    void theValkeyPasswordIsNotPrinted() throws Exception {
        Run run = check(file(GOOD + "ratelimit.valkey.url=redis://app:s3cret@valkey.internal:6379\n"), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("redis://app:***@valkey.internal:6379").doesNotContain("s3cret");
    }

    @Test
    void aMissingFileIsOneLineAndStatus1() throws Exception {
        Run run = check(dir.resolve("nowhere.properties"), Map.of());
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err().strip()).startsWith("ratelimit: cannot read the settings file").doesNotContain("\n");
    }

    private Path file(String text) throws IOException {
        Path file = dir.resolve("microprofile-config.properties");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    private Run check(Path file, Map<String, String> environment) throws Exception {
        Path jar = Path.of(System.getProperty("cli.jar", "../cli/target/ratelimit-cli.jar"));
        assertThat(jar).as("the command's JAR, built before these tests").isRegularFile();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", jar.toString(), "check", file.toString()));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(name -> name.startsWith("RATELIMIT_"));
        builder.environment().putAll(environment);
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the command ended").isTrue();
        return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    }
}
