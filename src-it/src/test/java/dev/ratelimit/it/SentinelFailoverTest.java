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

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Sentinel-managed primary killed (SIGKILL) while eight threads are held to a limit: every
 * request is answered within its bounds by the rule's on-failure policy during the failover,
 * the limiter finds the promoted replica by itself, and the limit is enforced again, on the
 * count the replica had.
 */
class SentinelFailoverTest {

    private static final int LIMIT = 1_500;
    private static final int THREADS = 8;

    private static ValkeySentinels topology;

    @BeforeAll
    static void start() {
        topology = ValkeySentinels.start();
    }

    @AfterAll
    static void stop() {
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void killingThePrimaryUnderLoadIsAnsweredByPolicyThenTheReplicaEnforcesTheLimit() throws Exception {
        Rule rule = Rule.of("failover", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofDays(1));
        ValkeySettings settings = ValkeySettings.of("redis://sentinel-managed")
                .withSentinel(ValkeySentinels.MASTER, topology.sentinelNodes())
                .withConnectTimeout(Duration.ofMillis(50)).withSocketTimeout(Duration.ofMillis(50))
                .withPoolMaxWait(Duration.ofMillis(20));
        try (ValkeyRateLimiter valkey = ValkeyRateLimiter.builder().settings(settings)
                .circuitBreaker(5, Duration.ofMillis(500)).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(valkey)
                     .policy(rule, FailurePolicy.open()).denyCache(0).build()) {
            int oldPrimary = ValkeySentinels.port(topology.primary());
            long counted;
            FailoverLoad load = new FailoverLoad(limiter, rule, "shared", THREADS);
            try (load) {
                FailoverLoad.sleep(1_000);
                load.kill(topology.primary()::stop);
                // Then until the limit is reached and enforced.
                load.awaitEnforced(50);
            }
            assertThat(load.recoveryMillis()).as("ms to a shared decision after the kill").isPositive();
            int newPrimary = topology.currentPrimaryPort().orElseThrow();
            try (Jedis promoted = topology.replica().connect()) {
                counted = FailoverLoad.fixedWindowCount(promoted, valkey.stateKey(rule, "shared"));
            }
            System.out.println("sentinel failover: " + load.summary(counted, LIMIT));

            assertThat(newPrimary).as("the sentinels promoted the replica").isEqualTo(ValkeySentinels.port(topology.replica()))
                    .isNotEqualTo(oldPrimary);
            load.assertTheLimitHeldAcrossTheFailover(counted, LIMIT);

            // A new key on the promoted primary: exactly its limit.
            assertThat(FailoverLoad.allowedOnAFreshKey(limiter, "fresh")).isEqualTo(5);
        }
    }
}
