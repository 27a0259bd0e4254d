package dev.ratelimit.it;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.ratelimit.Decision;
import dev.ratelimit.Reservation;
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
import redis.clients.jedis.Jedis;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit inspect}, {@code reset} and {@code top}, the real JAR in a process of its own
 * against a real Valkey: a user locked out of login over HTTP found and unblocked; every
 * algorithm's state as {@code peek} decides it; the keys nearest their limit; bad input in one line.
 */
@ExtendWith(ValkeyExtension.class)
class CliInspectResetTest {

    private static final List<String> ALGORITHMS =
            List.of("fixed-window", "sliding-log", "sliding-window-counter", "token-bucket", "gcra", "concurrency");

    private final ValkeyServer valkey;

    @TempDir
    Path dir;

    CliInspectResetTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void clean() {
        valkey.flushAll();
    }

    /** The login rule of the README's example, and one rule per algorithm keyed by a header. */
    private Map<String, String> settings() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("ratelimit.valkey.url", valkey.url());
        // A rejection replayed by the deny cache (up to 1 s) would hide that a reset unblocked the key,
        // when the commands between the 429 and the next request take less than that.
        m.put("ratelimit.deny-cache.enabled", "false");
        m.put("ratelimit.rules", "login," + ALGORITHMS.stream().map(a -> "r-" + a).collect(Collectors.joining(",")) + ",pair");
        m.put("ratelimit.rule.login.match", "/login");
        m.put("ratelimit.rule.login.methods", "POST");
        m.put("ratelimit.rule.login.algorithm", "sliding-log");
        m.put("ratelimit.rule.login.limit", "3");
        m.put("ratelimit.rule.login.window", "15m");
        m.put("ratelimit.rule.login.key", "param:username");
        m.put("ratelimit.rule.login.lowercase-key", "true");
        for (String algorithm : ALGORITHMS) {
            m.put("ratelimit.rule.r-" + algorithm + ".match", "/" + algorithm + "/*");
            m.put("ratelimit.rule.r-" + algorithm + ".algorithm", algorithm);
            m.put("ratelimit.rule.r-" + algorithm + ".limit", "5");
            if (algorithm.equals("concurrency")) {
                m.put("ratelimit.rule.r-" + algorithm + ".permit-timeout", "1h");
            } else {
                m.put("ratelimit.rule.r-" + algorithm + ".window", "1h");
            }
            m.put("ratelimit.rule.r-" + algorithm + ".key", "header:X-Tenant");
        }
        m.put("ratelimit.rule.pair.match", "/pair");
        m.put("ratelimit.rule.pair.algorithm", "fixed-window");
        m.put("ratelimit.rule.pair.limit", "2");
        m.put("ratelimit.rule.pair.window", "1h");
        m.put("ratelimit.rule.pair.key", "ip+header:X-Tenant");
        return m;
    }

    private Path file(Map<String, String> settings) throws Exception {
        Path file = dir.resolve("microprofile-config.properties");
        Files.writeString(file, settings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n")), StandardCharsets.UTF_8);
        return file;
    }

    private static Rule rule(Map<String, String> settings, String name) {
        FilterSettings read = SettingsReader.read(new MapSettingsSource(settings));
        return read.rules().stream().map(RuleSettings::rule).filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    /**
     * A path key reset with the path as an access log has it (encoded, a path parameter): the
     * key named is the one the filter built from the path the container read, so the path is
     * unblocked.
     */
    @Test
    void aPathPastedFromAnAccessLogIsTheKeyTheFilterBuilt() throws Exception {
        Map<String, String> settings = settings();
        settings.put("ratelimit.rules", settings.get("ratelimit.rules") + ",pages");
        settings.put("ratelimit.rule.pages.match", "/pages/*");
        settings.put("ratelimit.rule.pages.algorithm", "fixed-window");
        settings.put("ratelimit.rule.pages.limit", "1");
        settings.put("ratelimit.rule.pages.window", "1h");
        settings.put("ratelimit.rule.pages.key", "path");
        Path file = file(settings);
        String logged = "/pages/A%20b;jsessionid=1";
        try (JettyApp app = JettyApp.start(settings)) {
            assertThat(app.get(logged).statusCode()).isEqualTo(200);
            assertThat(app.get(logged).statusCode()).isEqualTo(429);
            CliProcess.Run reset = CliProcess.run(dir, "reset", "-s", file.toString(), "pages", logged);
            assertThat(reset.status()).as(reset.err()).isZero();
            assertThat(reset.out()).startsWith("removed ");
            assertThat(app.get(logged).statusCode()).as("unblocked").isEqualTo(200);
        }
    }

    @Test
    void aUserLockedOutOfLoginIsFoundAndUnblocked() throws Exception {
        Map<String, String> settings = settings();
        Path file = file(settings);
        try (JettyApp app = JettyApp.start(settings)) {
            for (int i = 0; i < 3; i++) {
                assertThat(app.postForm("/login", "username=Alice").statusCode()).isEqualTo(200);
            }
            assertThat(app.postForm("/login", "username=Alice").statusCode()).isEqualTo(429);

            CliProcess.Run inspect = CliProcess.run(dir, "inspect", "-s", file.toString(), "login", "Alice");
            assertThat(inspect.status()).as(inspect.err()).isZero();
            assertThat(inspect.out()).contains("rl:v1:login:sliding-log:{param.username:alice}")
                    .contains("rejected now, retry after").contains("0 of 3 remaining").contains("state: zset");

            CliProcess.Run reset = CliProcess.run(dir, "reset", "-s", file.toString(), "login", "Alice");
            assertThat(reset.status()).as(reset.err()).isZero();
            assertThat(reset.out()).contains("removed rl:v1:login:sliding-log:{param.username:alice}")
                    .contains("0 of 3 remaining");
            assertThat(app.postForm("/login", "username=Alice").statusCode()).isEqualTo(200);

            CliProcess.Run again = CliProcess.run(dir, "reset", "-s", file.toString(), "login", "bob");
            assertThat(again.out()).contains("nothing to remove");
        }
    }

    @Test
    void inspectSaysWhatPeekDecidesForEveryAlgorithm() throws Exception {
        Map<String, String> settings = settings();
        Path file = file(settings);
        List<Reservation> held = new ArrayList<>();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            for (String algorithm : ALGORITHMS) {
                Rule rule = rule(settings, "r-" + algorithm);
                String key = "header.x-tenant:acme";
                for (int i = 0; i < 3; i++) {
                    held.add(limiter.reserve(rule, key)); // kept: a concurrency lease stays held
                }
                CliProcess.Run run = CliProcess.run(dir, "inspect", "--json", "-s", file.toString(), "r-" + algorithm, "acme");
                assertThat(run.status()).as(algorithm + ": " + run.err()).isZero();
                JsonObject json = JsonParser.parseString(run.out()).getAsJsonObject();
                Decision peek = limiter.peek(rule, key, 1);
                assertThat(json.get("valkeyKey").getAsString()).isEqualTo(limiter.stateKey(rule, key));
                assertThat(json.get("remaining").getAsLong()).as(algorithm).isEqualTo(peek.remaining()).isEqualTo(2);
                assertThat(json.get("limit").getAsLong()).as(algorithm).isEqualTo(peek.limit());
                assertThat(json.get("allowed").getAsBoolean()).as(algorithm).isEqualTo(peek.allowed());
                assertThat(json.get("fullAfterMs").getAsLong()).as(algorithm)
                        .isBetween(peek.resetAfter().toMillis() - 60_000, peek.resetAfter().toMillis() + 60_000);
                assertThat(json.get("nextUnitMs").getAsLong()).as(algorithm).isPositive();
                assertThat(json.get("exists").getAsBoolean()).isTrue();
                assertThat(json.get("ttlMs").getAsLong()).as(algorithm).isPositive();
                assertThat(json.get("raw").getAsJsonArray()).as(algorithm).isNotEmpty();
                assertThat(limiter.peek(rule, key, 1).remaining()).as("inspect took nothing").isEqualTo(2);
            }
            CliProcess.Run leases = CliProcess.run(dir, "inspect", "-s", file.toString(), "r-concurrency", "acme");
            assertThat(leases.out()).as(leases.err()).contains("3 lease(s) of requests in progress: the first times out in")
                    .contains("2 of 5 remaining");
        }
    }

    @Test
    void aKeyOfSeveralPartsTakesOneValueEachAndAddressesAreCountedAsTheFilterCountsThem() throws Exception {
        Map<String, String> settings = settings();
        settings.put("ratelimit.ipv6-prefix", "64");
        Path file = file(settings);
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            Rule pair = rule(settings, "pair");
            String key = "ip:2001:db8:1:2::/64+header.x-tenant:acme";
            limiter.acquire(pair, key);
            limiter.acquire(pair, key);
            CliProcess.Run run = CliProcess.run(dir, "inspect", "-s", file.toString(), "pair", "2001:db8:1:2:aaaa::7", "acme");
            assertThat(run.status()).as(run.err()).isZero();
            assertThat(run.out()).contains(limiter.stateKey(pair, key)).contains("0 of 2 remaining");

            CliProcess.Run one = CliProcess.run(dir, "inspect", "-s", file.toString(), "pair", "acme");
            assertThat(one.status()).isEqualTo(1);
            assertThat(one.err().strip()).isEqualTo("ratelimit inspect: rule 'pair' has key ip+header:X-Tenant: give 2 "
                    + "value(s) (ip, header:X-Tenant), not 1");
            CliProcess.Run notAnAddress = CliProcess.run(dir, "inspect", "-s", file.toString(), "pair", "acme", "acme");
            assertThat(notAnAddress.err().strip()).isEqualTo("ratelimit inspect: rule 'pair' has key ip+header:X-Tenant: "
                    + "'acme' is not an IP address");
        }
    }

    @Test
    void topListsTheKeysNearestTheirLimitFirstWithinItsBounds() throws Exception {
        Map<String, String> settings = settings();
        Path file = file(settings);
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            Rule rule = rule(settings, "r-token-bucket");
            for (int i = 0; i < 40; i++) {
                for (int taken = 0; taken < (i == 7 ? 6 : i % 5); taken++) {
                    limiter.acquire(rule, "header.x-tenant:t" + i);
                }
            }
            // t7 took all 5 and one more was refused; t4, t9 ... took 4; t0, t5 ... nothing (no state).
            CliProcess.Run run = CliProcess.run(dir, "top", "--json", "--limit", "3", "-s", file.toString(), "r-token-bucket");
            assertThat(run.status()).as(run.err()).isZero();
            JsonObject json = JsonParser.parseString(run.out()).getAsJsonObject();
            assertThat(json.get("keysSeen").getAsInt()).isEqualTo(32);
            assertThat(json.get("complete").getAsBoolean()).isTrue();
            List<String> keys = new ArrayList<>();
            json.get("nearest").getAsJsonArray().forEach(e -> keys.add(e.getAsJsonObject().get("valkeyKey").getAsString()));
            assertThat(keys).hasSize(3).first().isEqualTo(limiter.stateKey(rule, "header.x-tenant:t7"));
            assertThat(json.get("nearest").getAsJsonArray().get(1).getAsJsonObject().get("remaining").getAsLong()).isEqualTo(1);
            assertThat(run.err()).contains("scanned");

            CliProcess.Run bounded = CliProcess.run(dir, "top", "--max-keys", "10", "-s", file.toString(), "r-token-bucket");
            assertThat(bounded.status()).as(bounded.err()).isZero();
            assertThat(bounded.out()).contains("10 key(s) looked at, stopped by --max-keys or --max-seconds");
        }
    }

    @Test
    void badInputIsOneLineAndStatus1() throws Exception {
        Path file = file(settings());
        CliProcess.Run unknown = CliProcess.run(dir, "inspect", "-s", file.toString(), "logn", "alice");
        assertThat(unknown.status()).isEqualTo(1);
        assertThat(unknown.err().strip()).startsWith("ratelimit inspect: no rule 'logn' in these settings; the rules are login,");

        Map<String, String> down = settings();
        down.put("ratelimit.valkey.url", "redis://app:s3cret@127.0.0.1:" + ValkeyServer.freePort());
        CliProcess.Run unreachable = CliProcess.run(dir, "reset", "-s", file(down).toString(), "login", "alice");
        assertThat(unreachable.status()).isEqualTo(1);
        assertThat(unreachable.err().lines().count()).as(unreachable.err()).isEqualTo(1);
        assertThat(unreachable.err()).contains("ratelimit reset: Valkey could not be asked").doesNotContain("s3cret")
                .doesNotContain("\tat ");

        CliProcess.Run usage = CliProcess.run(dir, "top", "-s", file.toString());
        assertThat(usage.status()).isEqualTo(2);
    }

    /** A number out of its range is bad usage (2), said before Valkey is asked: none here answers. */
    @Test
    void aNumberOutOfItsRangeIsBadUsage() throws Exception {
        Map<String, String> down = settings();
        down.put("ratelimit.valkey.url", "redis://127.0.0.1:" + ValkeyServer.freePort());
        Path file = file(down);
        for (List<String> option : List.of(List.of("--limit", "0"), List.of("--max-keys", "0"), List.of("--max-seconds", "-1"))) {
            List<String> args = new ArrayList<>(List.of("top", "-s", file.toString(), "login"));
            args.addAll(option);
            CliProcess.Run run = CliProcess.run(dir, args.toArray(String[]::new));
            assertThat(run.status()).as(option + ": " + run.err()).isEqualTo(2);
            assertThat(run.err()).as(option.toString()).contains(option.get(0) + " must be at least 1: '" + option.get(1) + "'")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void theReadmesAclLineForTheToolIsEnoughAndAnAclWithoutItIsOneLine() throws Exception {
        String line = Files.readAllLines(Path.of("../docs/cli.md")).stream()
                .filter(l -> l.startsWith("ACL SETUSER ratelimit-ops ")).findFirst().orElseThrow();
        String[] rights = line.substring("ACL SETUSER ratelimit-ops ".length()).replace(">CHANGE-ME", ">0ps-pw").split(" ");
        Map<String, String> settings = settings();
        try (Jedis admin = valkey.connect();
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build()) {
            admin.aclSetUser("ratelimit-ops", rights);
            admin.aclSetUser("too-little", "on", ">0ps-pw", "~rl:*", "-@all", "+fcall", "+get");
            try {
                settings.put("ratelimit.valkey.url", valkey.url().replace("redis://", "redis://ratelimit-ops:0ps-pw@"));
                Path file = file(settings);
                for (String algorithm : ALGORITHMS) {
                    Rule rule = rule(settings, "r-" + algorithm);
                    limiter.reserve(rule, "header.x-tenant:acme");
                    for (List<String> command : List.of(List.of("inspect", "r-" + algorithm, "acme"),
                            List.of("top", "r-" + algorithm), List.of("reset", "r-" + algorithm, "acme"))) {
                        List<String> args = new ArrayList<>(List.of(command.get(0), "-s", file.toString()));
                        args.addAll(command.subList(1, command.size()));
                        CliProcess.Run run = CliProcess.run(dir, args.toArray(String[]::new));
                        assertThat(run.status()).as(algorithm + " " + command + ": " + run.err()).isZero();
                    }
                    assertThat(limiter.peek(rule, "header.x-tenant:acme", 1).remaining()).as("reset").isEqualTo(5);
                }
                settings.put("ratelimit.valkey.url", valkey.url().replace("redis://", "redis://too-little:0ps-pw@"));
                CliProcess.Run refused = CliProcess.run(dir, "top", "-s", file(settings).toString(), "login");
                assertThat(refused.status()).isEqualTo(1);
                assertThat(refused.err().lines().count()).as(refused.err()).isEqualTo(1);
                assertThat(refused.err()).contains("NOPERM").doesNotContain("0ps-pw");
            } finally {
                admin.aclDelUser("ratelimit-ops");
                admin.aclDelUser("too-little");
            }
        }
    }
}
