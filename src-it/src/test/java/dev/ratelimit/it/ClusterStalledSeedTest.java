package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A call that times out on a stalled cluster node costs one call's bound (README, "Bounded
 * time"), also when that node is the one the client was given to discover the cluster: the call
 * must not go on to ask the stalled node where the slots are, and wait on it a second time.
 */
class ClusterStalledSeedTest {

    private static final Duration CONNECT = Duration.ofMillis(50);
    private static final Duration SOCKET = Duration.ofMillis(400);
    private static final Duration POOL_WAIT = Duration.ofMillis(20);

    @Test
    void aTimeoutOnTheStalledSeedNodeCostsOneBound() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3);
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(cluster.seedUrl())
                     .withCluster(true).withSocketTimeout(SOCKET).withConnectTimeout(CONNECT)
                     .withPoolMaxWait(POOL_WAIT)).build()) {
            Rule rule = Rule.of("per-second", Algorithm.FIXED_WINDOW, 100, Duration.ofSeconds(1));
            ValkeyServer seed = cluster.nodes().get(0);
            String key = null;
            for (int i = 0; key == null; i++) {
                if (cluster.primaryOf(JedisClusterCRC16.getSlot(limiter.stateKey(rule, "k" + i))) == seed) {
                    key = "k" + i;
                }
            }
            // A pooled connection to the seed node, so that the acquire is sent at once.
            assertThat(limiter.peek(rule, key, 1).allowed()).isTrue();
            String k = key;
            // Sent into the stall, and within 300 ms of its start (plus what a busy machine adds):
            // a second wait on the node would end inside it too.
            CompletableFuture<Void> stall = Stalls.begin(seed, Duration.ofMillis(2_000));
            long start = System.nanoTime();
            String outcome;
            try {
                outcome = "answered: " + limiter.acquire(rule, k);
            } catch (RuntimeException e) {
                outcome = "threw: " + e;
            }
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            stall.join();
            long bound = CONNECT.plus(SOCKET).plus(POOL_WAIT).toMillis();
            assertThat(outcome).as("the acquire timed out in the stall").startsWith("threw");
            // Generous slack for a busy box: a second wait on the stalled node costs a whole SOCKET more.
            assertThat(elapsedMillis).as("ms the timed-out acquire took, for a bound of " + bound + " ms (" + outcome + ")")
                    .isLessThan(bound + 250);
        }
    }
}
