package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One acquire on a cluster node that stalls past the socket timeout runs once: the cluster
 * client does not send a command again after a read timeout (README, "When Valkey is down").
 */
class ClusterSentOnceTest {

    /** Socket and connect timeout: long enough for a busy machine, short against the stall. */
    private static final Duration TIMEOUT = Duration.ofMillis(1_500);

    @Test
    void anAcquireThatTimedOutIsNotSentAgain() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3);
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(cluster.seedUrl())
                     .withCluster(true).withSocketTimeout(TIMEOUT).withConnectTimeout(TIMEOUT)).build()) {
            Rule rule = Rule.of("leases", Algorithm.CONCURRENCY, 1, Duration.ofSeconds(60));
            String key = "k";
            ValkeyServer node = cluster.primaryOf(JedisClusterCRC16.getSlot(limiter.stateKey(rule, key)));
            // A pooled connection to the node, so that the acquire is sent at once.
            assertThat(limiter.peek(rule, key, 1).allowed()).isTrue();
            long fcallsBefore = node.commandCalls("fcall");
            // The node sleeps past the socket timeout of an acquire sent up to 1 s into the stall
            // (it is sent within 300 ms and what a busy machine adds), and wakes before a second
            // attempt's new connection would give up: a command sent again would run.
            CompletableFuture<Void> stall = Stalls.begin(node, TIMEOUT.plusSeconds(1));
            String outcome;
            try {
                Decision d = limiter.acquire(rule, key);
                outcome = "answered: " + d;
            } catch (RuntimeException e) {
                outcome = "threw: " + e;
            }
            stall.join();
            Thread.sleep(500);
            long runs = node.commandCalls("fcall") - fcallsBefore;
            assertThat(outcome).as("the acquire timed out in the stall").startsWith("threw");
            assertThat(runs).as("function calls run for one acquire (" + outcome + ")").isEqualTo(1);
        }
    }
}
