package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Valkey Cluster shard's primary killed (SIGKILL) while eight threads are held to a limit on a
 * key it serves: during the failover every request is answered within its bounds by the rule's
 * on-failure policy, the cluster client finds the promoted replica by itself, and the limit is
 * enforced again on the count the replica had.
 */
class ClusterFailoverTest {

    private static final int LIMIT = 1_500;
    private static final int THREADS = 8;

    private static ValkeyCluster cluster;

    @BeforeAll
    static void start() {
        // A node timeout of 1 s: the cluster marks the killed primary failed and promotes its
        // replica in about two, rather than the default fifteen.
        cluster = ValkeyCluster.startWithReplicas(3, 1_000);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void killingAShardsPrimaryUnderLoadIsAnsweredByPolicyThenItsReplicaEnforcesTheLimit() throws Exception {
        // A day, so that the epoch-aligned window does not roll over during the test.
        Rule rule = Rule.of("failover", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofDays(1));
        ValkeySettings settings = ValkeySettings.of(cluster.seedUrl()).withCluster(true)
                .withConnectTimeout(Duration.ofMillis(100)).withSocketTimeout(Duration.ofMillis(100))
                .withPoolMaxWait(Duration.ofMillis(20));
        try (ValkeyRateLimiter valkey = ValkeyRateLimiter.builder().settings(settings)
                .circuitBreaker(5, Duration.ofMillis(500)).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(valkey)
                     .policy(rule, FailurePolicy.open()).denyCache(0).build()) {
            // A key on a shard other than the seed node's, so the kill does not also take the
            // node the client was built from.
            String key = keyNotServedBy(valkey, rule, cluster.nodes().get(0));
            int slot = JedisClusterCRC16.getSlot(valkey.stateKey(rule, key));
            ValkeyServer oldPrimary = cluster.primaryOf(slot);
            // And a key on a shard that keeps its primary: with the default
            // cluster-require-full-coverage, the whole cluster refuses calls until the failover.
            Rule elsewhere = Rule.of("elsewhere", Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofDays(1));
            String otherKey = keyServedBy(valkey, elsewhere, cluster.nodes().get(0));
            FailoverLoad load = new FailoverLoad(limiter, rule, key, THREADS);
            FailoverLoad otherShard = new FailoverLoad(limiter, elsewhere, otherKey, 2);
            try (load; otherShard) {
                FailoverLoad.sleep(1_000);
                load.kill(oldPrimary::stop);
                // Then until the limit is reached and enforced.
                load.awaitEnforced(50);
            }
            assertThat(load.recoveryMillis()).as("ms to a shared decision after the kill; the cluster: %s",
                    cluster.describe()).isPositive();
            ValkeyServer newPrimary = cluster.primaryOf(slot);
            long counted;
            try (Jedis promoted = newPrimary.connect()) {
                counted = FailoverLoad.fixedWindowCount(promoted, valkey.stateKey(rule, key));
            }
            System.out.printf("cluster failover: %s; on a shard that kept its primary %d requests answered by policy, "
                    + "%d by Valkey%n", load.summary(counted, LIMIT), otherShard.byPolicy.get(), otherShard.sharedAllowed.get());

            assertThat(otherShard.escaped).as("exceptions that reached the caller").isEmpty();
            assertThat(otherShard.sharedAllowed.get()).as("the other shard decided before and after").isPositive();
            assertThat(newPrimary).as("the cluster promoted the replica").isNotSameAs(oldPrimary);
            load.assertTheLimitHeldAcrossTheFailover(counted, LIMIT);

            // A new key in the same slot, on the promoted primary: exactly its limit.
            assertThat(FailoverLoad.allowedOnAFreshKey(limiter, key)).isEqualTo(5);
        }
    }

    private static String keyNotServedBy(ValkeyRateLimiter valkey, Rule rule, ValkeyServer node) {
        for (int i = 0; ; i++) {
            String key = "shared-" + i;
            if (cluster.primaryOf(JedisClusterCRC16.getSlot(valkey.stateKey(rule, key))) != node) {
                return key;
            }
        }
    }

    private static String keyServedBy(ValkeyRateLimiter valkey, Rule rule, ValkeyServer node) {
        for (int i = 0; ; i++) {
            String key = "other-" + i;
            if (cluster.primaryOf(JedisClusterCRC16.getSlot(valkey.stateKey(rule, key))) == node) {
                return key;
            }
        }
    }
}
