package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Not only acquires are sent once on a cluster: a refund and a reset that time out on a stalled
 * node run once each when it wakes (a refund run twice would give its units back twice).
 */
class ClusterSentOnceRefundResetTest {

    private static String outcome(Runnable call) {
        try {
            call.run();
            return "answered";
        } catch (RuntimeException e) {
            return "threw: " + e;
        }
    }

    @Test
    void aRefundAndAResetThatTimedOutAreNotSentAgain() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3);
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(cluster.seedUrl())
                     .withCluster(true).withSocketTimeout(Duration.ofMillis(200))
                     .withConnectTimeout(Duration.ofMillis(200))).build()) {
            Rule rule = Rule.of("per-minute", Algorithm.FIXED_WINDOW, 10, Duration.ofSeconds(60));
            String key = "k";
            ValkeyServer node = cluster.primaryOf(JedisClusterCRC16.getSlot(limiter.stateKey(rule, key)));
            Reservation reservation = limiter.reserveAll(List.of(Claim.of(rule, key, 3)));
            assertThat(reservation.allowed()).isTrue();
            long fcallsBefore = node.commandCalls("fcall");
            long delsBefore = node.commandCalls("del");
            // Long enough that a second attempt of either call would be sent within it and run
            // once the node wakes.
            Thread stall = new Thread(() -> node.stall(Duration.ofMillis(900)));
            stall.start();
            Thread.sleep(150);
            String refund = outcome(reservation::cancel);
            String reset = outcome(() -> limiter.reset(rule, key));
            stall.join();
            // Once the node has run what was sent in the stall (a busy machine may take a while),
            // a little longer, in which a second attempt would have run too.
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while ((node.commandCalls("fcall") - fcallsBefore < 1 || node.commandCalls("del") - delsBefore < 1)
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(200);
            long refunds = node.commandCalls("fcall") - fcallsBefore;
            long resets = node.commandCalls("del") - delsBefore;
            assertThat(refund).as("the refund timed out in the stall").startsWith("threw");
            assertThat(reset).as("the reset timed out in the stall").startsWith("threw");
            assertThat(refunds).as("function calls run for one refund (" + refund + ")").isEqualTo(1);
            assertThat(resets).as("DELs run for one reset (" + reset + ")").isEqualTo(1);
        }
    }
}
