package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

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

    @Test
    void aGoodFileIsValidAndItsRulesAreSaidAsUnderstood() throws Exception {
        CliProcess.Run run = check(file(GOOD), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("valid; 2 rule(s)")
                .contains("api: any method [/api/*], key principal-or-ip, token-bucket 10 per PT1M (burst 5), on-failure open")
                .contains("login: POST [/login], key param:username, sliding-log 5 per PT15M, on-failure closed");
    }

    @Test
    void everyProblemIsReportedNamingThePropertyAndItsValueWithStatus1() throws Exception {
        CliProcess.Run run = check(file(GOOD.replace("limit=10", "limit=-3").replace("algorithm=sliding-log", "algorithm=sliding-logg")),
                Map.of());
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).contains("ratelimit.rule.api.limit='-3'").contains("ratelimit.rule.login.algorithm='sliding-logg'")
                .doesNotContain("\tat ");
    }

    @Test
    void anEnvironmentVariableOverridesTheFileAsInTheContainer() throws Exception {
        CliProcess.Run run = check(file(GOOD), Map.of("RATELIMIT_RULE_API_LIMIT", "lots"));
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).contains("ratelimit.rule.api.limit").contains("lots");
    }

    @Test
    void theValkeyPasswordIsNotPrinted() throws Exception {
        CliProcess.Run run = check(file(GOOD + "ratelimit.valkey.url=redis://app:s3cret@valkey.internal:6379\n"), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("redis://app:***@valkey.internal:6379").doesNotContain("s3cret");
    }

    /** A URL the client could never connect with is refused here, not left to fail open at every request. */
    @Test
    void aValkeyUrlThatCannotWorkIsRefusedNamingThePropertyWithoutThePassword() throws Exception {
        CliProcess.Run run = check(file(GOOD + "ratelimit.valkey.url=redis://app:s3cret@127.0.0.1:99999\n"), Map.of());
        assertThat(run.status()).as(run.out()).isEqualTo(1);
        assertThat(run.err()).contains("ratelimit.valkey.url='redis://app:***@127.0.0.1:99999' has port 99999: a port is from 1 to 65535")
                .doesNotContain("s3cret");
        CliProcess.Run sentinel = check(file(GOOD), Map.of("RATELIMIT_VALKEY_URL", "redis://valkey:6379",
                "RATELIMIT_VALKEY_SENTINEL_MASTER", "mymaster", "RATELIMIT_VALKEY_SENTINEL_NODES", "s1:26379,redis://s2:26379"));
        assertThat(sentinel.status()).as(sentinel.out()).isEqualTo(1);
        assertThat(sentinel.err()).contains("ratelimit.valkey.sentinel.nodes='redis://s2:26379' must be host:port");
    }

    @Test
    void aMissingFileIsOneLineAndStatus1() throws Exception {
        CliProcess.Run run = check(dir.resolve("nowhere.properties"), Map.of());
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err().strip()).startsWith("ratelimit: cannot read the settings file").doesNotContain("\n");
    }

    @Test
    void aPasswordWithoutAUserNameIsNotPrintedEither() throws Exception {
        // redis://PASSWORD@host: the whole user-info is the password (Jedis reads it so).
        CliProcess.Run run = check(file(GOOD + "ratelimit.valkey.url=redis://s3cret@valkey.internal:6379\n"), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("redis://***@valkey.internal:6379").doesNotContain("s3cret");
    }

    @Test
    void theRulesAsUnderstoodSayWhatChangesWhatTheyRefuse() throws Exception {
        CliProcess.Run run = check(file(GOOD.replace("ratelimit.rule.api.key=principal-or-ip\n", """
                ratelimit.rule.api.key=header:X-Api-Key
                ratelimit.rule.api.exclude=/api/health
                ratelimit.rule.api.lowercase-key=true
                ratelimit.rule.api.cost=2
                ratelimit.rule.api.on-failure=local
                ratelimit.rule.api.local-limit=4
                ratelimit.rule.api.local-lease=1
                ratelimit.rule.api.local-lease-time=10ms
                ratelimit.rule.api.plan=header:X-Plan
                ratelimit.rule.api.plan.pro.limit=100
                ratelimit.rule.api.plan.pro.burst=50
                """) + """
                ratelimit.rule.login.count-when=status:401,429
                ratelimit.rule.login.count-rejected=true
                ratelimit.rule.login.shadow=true
                """), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("api: any method [/api/*] except [/api/health], key header:X-Api-Key (lower-cased), cost 2, "
                        + "token-bucket 10 per PT1M (burst 5), on-failure local (in-process token-bucket 4 per PT1M (burst 2)), "
                        + "local lease 1 for PT0.01S; plan from header:X-Plan; plan pro: token-bucket 100 per PT1M (burst 50)")
                .contains("login: POST [/login], key param:username, sliding-log 5 per PT15M, count-when=status:401,429, "
                        + "count-rejected, shadow (observes, never refuses), on-failure closed");
    }

    @Test
    void methodsAndPlansAreSaidInOneOrderEveryRun() throws Exception {
        CliProcess.Run run = check(file(GOOD.replace("methods=POST", "methods=PUT,POST,GET,DELETE") + """
                ratelimit.rule.api.plan=role:gold,silver,bronze
                ratelimit.rule.api.plan.gold.limit=30
                ratelimit.rule.api.plan.silver.limit=20
                ratelimit.rule.api.plan.bronze.limit=15
                """), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("login: DELETE,GET,POST,PUT [/login]")
                .contains("; plan bronze: token-bucket 15 per PT1M (burst 8); plan gold: token-bucket 30 per PT1M (burst 15); "
                        + "plan silver: token-bucket 20 per PT1M (burst 10)");
    }

    @Test
    void aConcurrencyRuleIsSaidInFlightWithItsLeaseTimeoutNotPerWindow() throws Exception {
        CliProcess.Run run = check(file(GOOD.replace("ratelimit.rules=api,login", "ratelimit.rules=api,login,upload") + """
                ratelimit.rule.upload.match=/upload
                ratelimit.rule.upload.algorithm=concurrency
                ratelimit.rule.upload.limit=3
                ratelimit.rule.upload.key=ip
                ratelimit.rule.upload.permit-timeout=30s
                """), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("upload: any method [/upload], key ip, concurrency 3 at once (permit timeout PT30S)")
                .doesNotContain("per PT30S");
    }

    @Test
    void aCalendarWindowIsSaidWithItsZoneNotAsALength() throws Exception {
        CliProcess.Run run = check(file(GOOD.replace("ratelimit.rules=api,login", "ratelimit.rules=api,login,messages") + """
                ratelimit.rule.messages.algorithm=fixed-window
                ratelimit.rule.messages.limit=10000
                ratelimit.rule.messages.key=principal
                ratelimit.rule.messages.window=calendar-month
                ratelimit.rule.messages.time-zone=Europe/Berlin
                """), Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("messages: any method [/*], key principal, fixed-window 10000 per calendar-month in "
                + "Europe/Berlin, on-failure open").doesNotContain("per P31D").doesNotContain("PT744H");
    }

    @Test
    void aFileTooLargeForTheHeapIsOneLineNotAStackTrace() throws Exception {
        StringBuilder text = new StringBuilder(GOOD);
        for (int i = 0; i < 300_000; i++) {
            text.append("ratelimit.rule.api.x").append(i).append("=1\n");
        }
        CliProcess.Run run = check(file(text.toString()), Map.of(), "-Xmx32m");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).doesNotContain("\tat ").doesNotContain("Exception in thread");
        assertThat(run.err().strip()).startsWith("ratelimit: the settings file").doesNotContain("\n");
    }

    @Test
    void aClusterAndASentinelPrimaryAreSaidAsSuchNotAsThePlainUrl() throws Exception {
        CliProcess.Run sentinel = check(file(GOOD), Map.of("RATELIMIT_VALKEY_URL", "redis://app:s3cret@valkey:6379",
                "RATELIMIT_VALKEY_SENTINEL_MASTER", "mymaster", "RATELIMIT_VALKEY_SENTINEL_NODES", "s1:26379,s2:26379"));
        assertThat(sentinel.status()).as(sentinel.err()).isZero();
        assertThat(sentinel.out()).contains("Valkey Sentinel primary 'mymaster' via s1:26379,s2:26379 (redis://app:***@valkey:6379)")
                .doesNotContain("s3cret");
        CliProcess.Run cluster = check(file(GOOD), Map.of("RATELIMIT_VALKEY_URL", "redis://valkey:6379", "RATELIMIT_VALKEY_CLUSTER", "true"));
        assertThat(cluster.status()).as(cluster.err()).isZero();
        assertThat(cluster.out()).contains("Valkey Cluster at redis://valkey:6379");
    }

    @Test
    void anEmptyFileIsSaidByItsOwnNameNotByATemporaryCopy() throws Exception {
        Path file = file("");
        CliProcess.Run run = check(file, Map.of());
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).contains("no ratelimit.* property was found at all").contains(file.toAbsolutePath().toString())
                .doesNotContain("ratelimit-settings");
    }

    /**
     * A property written twice is said against the file given, with its lines (a continued line
     * counted as the file has it), never a temporary copy's path nor the value replaced.
     */
    @Test
    void aPropertyWrittenTwiceIsSaidByTheFileAndItsLines() throws Exception {
        Path file = file(GOOD + """
                ratelimit.rule.api.exclude=/api/health,\\
                  /api/ready
                ratelimit.valkey.url=redis://app:0ld-s3cret@valkey:6379
                ratelimit.rule.api.limit=20
                ratelimit.valkey.url=redis://app:s3cret@valkey:6379
                """);
        CliProcess.Run run = check(file, Map.of());
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.err()).contains(file.toAbsolutePath() + ": ratelimit.rule.api.limit is set on lines 4 and 18; the last is read")
                .contains(file.toAbsolutePath() + ": ratelimit.valkey.url is set on lines 17 and 19; the last is read")
                .doesNotContain("ratelimit-settings").doesNotContain("s3cret");
        assertThat(run.out()).contains("token-bucket 20 per PT1M");
    }

    private Path file(String text) throws IOException {
        Path file = dir.resolve("microprofile-config.properties");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    private CliProcess.Run check(Path file, Map<String, String> environment, String... jvmOptions) throws Exception {
        return CliProcess.run(dir, environment, List.of(jvmOptions), "check", file.toString());
    }
}
