package dev.ratelimit.it;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Valkey Cluster whose seed node is down when the application starts (README, When Valkey is
 * down: down at the start too): the {@code local} policy counts in process meanwhile, and once the
 * seed is back the cluster takes over, its keys in the slots of the nodes that hold them.
 */
class ClusterDownAtStartTest {

    @Test
    void theLocalPolicyCountsUntilTheSeedIsBackThenTheClusterEnforces() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3)) {
            ValkeyServer seed = cluster.nodes().get(0);
            seed.stop();
            Map<String, String> settings = JettyApp.settings(cluster.seedUrl(), "ratelimit.valkey.cluster", "true",
                    "ratelimit.valkey.connect-timeout", "300ms",
                    "ratelimit.rules", "seeded", "ratelimit.rule.seeded.limit", "3",
                    "ratelimit.rule.seeded.window", "1h", "ratelimit.rule.seeded.key", "global",
                    "ratelimit.rule.seeded.on-failure", "local", "ratelimit.deny-cache.enabled", "false");
            try (JettyApp app = JettyApp.start(settings)) {
                List<Integer> meanwhile = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    meanwhile.add(app.get("/hello").statusCode());
                }
                assertThat(meanwhile).as("the local policy counts while the seed is down")
                        .containsExactly(200, 200, 200, 429);
                // Back within the cluster's node timeout (5 s): the other nodes never mark it failed.
                seed.start();
                long deadline = System.nanoTime() + 60_000_000_000L;
                int status = 429;
                while (status == 429 && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                    status = app.get("/hello").statusCode();
                }
                assertThat(status).as("the cluster's own count, fresh, once the seed is back").isEqualTo(200);
                List<Integer> after = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    after.add(app.get("/hello").statusCode());
                }
                assertThat(after).as("the limit of 3 on the cluster, of which the first call took one")
                        .containsExactly(200, 200, 429);
            }
            List<String> keys = new ArrayList<>();
            for (ValkeyServer node : cluster.nodes()) {
                try (Jedis jedis = node.connect()) {
                    for (String key : jedis.keys("*")) {
                        keys.add(key);
                        assertThat(cluster.primaryOf(JedisClusterCRC16.getSlot(key))).as("the node holding " + key)
                                .isSameAs(node);
                    }
                }
            }
            assertThat(keys).as("the rule's state in the cluster").isNotEmpty();
        }
    }

    /** A seed node that accepts and never answers costs the start one connect and one reply at most. */
    @Tag("wall-clock") // bounds a latency: keep such tests few, with generous bounds
    @Test
    void aHangingSeedCostsTheStartItsTimeoutsOnly() throws Exception {
        try (SilentServer seed = new SilentServer()) {
            Map<String, String> settings = JettyApp.settings("redis://127.0.0.1:" + seed.port(),
                    "ratelimit.valkey.cluster", "true", "ratelimit.valkey.connect-timeout", "200ms",
                    "ratelimit.valkey.timeout", "300ms", "ratelimit.rules", "stalled", "ratelimit.rule.stalled.limit", "3",
                    "ratelimit.rule.stalled.window", "1m", "ratelimit.rule.stalled.key", "global",
                    "ratelimit.rule.stalled.on-failure", "closed");
            long start = System.nanoTime();
            try (JettyApp app = JettyApp.start(settings)) {
                long startMillis = (System.nanoTime() - start) / 1_000_000;
                assertThat(startMillis).as("ms the start took with a seed that never answers").isLessThan(3_000);
                assertThat(seed.connections()).as("the start asked the seed").isPositive();
                long call = System.nanoTime();
                assertThat(app.get("/hello").statusCode()).isEqualTo(503);
                assertThat((System.nanoTime() - call) / 1_000_000).as("ms of a call meanwhile").isLessThan(1_000);
            }
        }
    }
}
