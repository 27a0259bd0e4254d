package dev.ratelimit.it;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit inspect}, {@code reset} and {@code top} on the topologies beyond one server,
 * the real JAR, with the settings from environment variables alone (no file), as in a container:
 * a three-node Valkey Cluster ({@code top} scans every primary, {@code inspect} and {@code reset}
 * reach the node of the key) and a Sentinel-managed primary.
 */
class CliTopologiesTest {

    @TempDir
    Path dir;

    @Test
    void topScansEveryPrimaryAndResetReachesTheKeysNode() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3);
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                     .settings(ValkeySettings.of(cluster.seedUrl()).withCluster(true).withSocketTimeout(Duration.ofSeconds(2)))
                     .build()) {
            Rule rule = Rule.of("api", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));
            Set<String> nodes = new HashSet<>();
            for (int i = 0; i < 30; i++) {
                String key = "user:u" + i;
                for (int taken = 0; taken <= i % 5; taken++) {
                    limiter.acquire(rule, key);
                }
                nodes.add(cluster.primaryOf(JedisClusterCRC16.getSlot(limiter.stateKey(rule, key))).url());
            }
            assertThat(nodes).as("the keys are spread over every primary").hasSize(3);
            Map<String, String> environment = Map.of("RATELIMIT_VALKEY_URL", cluster.seedUrl(),
                    "RATELIMIT_VALKEY_CLUSTER", "true", "RATELIMIT_RULES", "api",
                    "RATELIMIT_RULE_API_MATCH", "/api/*", "RATELIMIT_RULE_API_ALGORITHM", "fixed-window",
                    "RATELIMIT_RULE_API_LIMIT", "5", "RATELIMIT_RULE_API_WINDOW", "1h",
                    "RATELIMIT_RULE_API_KEY", "principal");

            CliProcess.Run top = CliProcess.run(dir, environment, java.util.List.of(), "top", "--json", "--limit", "6", "api");
            assertThat(top.status()).as(top.err()).isZero();
            JsonObject json = JsonParser.parseString(top.out()).getAsJsonObject();
            assertThat(json.get("keysSeen").getAsInt()).isEqualTo(30);
            assertThat(json.get("complete").getAsBoolean()).isTrue();
            json.get("nearest").getAsJsonArray().forEach(e -> assertThat(e.getAsJsonObject().get("remaining").getAsLong())
                    .as("the six keys that took all five").isZero());

            CliProcess.Run reset = CliProcess.run(dir, environment, java.util.List.of(), "reset", "api", "u9");
            assertThat(reset.status()).as(reset.err()).isZero();
            assertThat(reset.out()).contains("removed " + limiter.stateKey(rule, "user:u9")).contains("0 of 5 remaining");
            assertThat(limiter.acquire(rule, "user:u9").remaining()).isEqualTo(4);

            CliProcess.Run inspect = CliProcess.run(dir, environment, java.util.List.of(), "inspect", "api", "u3");
            assertThat(inspect.status()).as(inspect.err()).isZero();
            assertThat(inspect.out()).contains("allowed now: 1 of 5 remaining");
        }
    }

    @Test
    void theSentinelsNameThePrimaryInspectedAndReset() throws Exception {
        try (ValkeySentinels topology = ValkeySentinels.start();
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(topology.primary().url())).build()) {
            Rule rule = Rule.of("api", Algorithm.GCRA, 3, Duration.ofHours(1));
            limiter.acquire(rule, "user:alice");
            limiter.acquire(rule, "user:alice");
            Map<String, String> environment = Map.of("RATELIMIT_VALKEY_URL", "redis://ignored:1",
                    "RATELIMIT_VALKEY_SENTINEL_MASTER", ValkeySentinels.MASTER,
                    "RATELIMIT_VALKEY_SENTINEL_NODES", String.join(",", topology.sentinelNodes()),
                    "RATELIMIT_RULES", "api", "RATELIMIT_RULE_API_MATCH", "/api/*",
                    "RATELIMIT_RULE_API_ALGORITHM", "gcra", "RATELIMIT_RULE_API_LIMIT", "3",
                    "RATELIMIT_RULE_API_WINDOW", "1h", "RATELIMIT_RULE_API_KEY", "principal");
            CliProcess.Run inspect = CliProcess.run(dir, environment, java.util.List.of(), "inspect", "api", "alice");
            assertThat(inspect.status()).as(inspect.err()).isZero();
            assertThat(inspect.out()).contains(limiter.stateKey(rule, "user:alice")).contains("1 of 3 remaining");
            CliProcess.Run reset = CliProcess.run(dir, environment, java.util.List.of(), "reset", "api", "alice");
            assertThat(reset.status()).as(reset.err()).isZero();
            assertThat(limiter.peek(rule, "user:alice", 1).remaining()).isEqualTo(3);
        }
    }
}
