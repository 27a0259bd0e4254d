package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decisions;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request part-served by a lease whose store call fails (Valkey paused past the timeout): the
 * rule's {@code on-failure} policy rejects it, and the units it took from the lease go back to
 * the lease, as they do when the store rejects it (README, "Local leases": all or nothing).
 */
@ExtendWith(ValkeyExtension.class)
class LeaseStoreFailureTest {

    private static final Duration PAUSE = Duration.ofMillis(1_500);

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseStoreFailureTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** One leased rule: a request bigger than the lease, asked while Valkey does not answer. */
    @Test
    void aRequestRefusedByItsPolicyLeavesTheLeaseWhole() {
        Rule leased = Rule.of("leased", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        assertWhole(leased, List.of(Claim.of(leased, "k", 100)));
    }

    /** A leased rule served whole by its lease, beside an unleased rule whose store call fails. */
    @Test
    void aRequestRefusedByAnotherRulesPolicyLeavesTheLeaseWhole() {
        Rule leased = Rule.of("leased", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        Rule other = Rule.of("other", Algorithm.SLIDING_LOG, 1_000, Duration.ofHours(1));
        assertWhole(leased, List.of(Claim.of(leased, "k", 1), Claim.of(other, "k", 1)));
    }

    private void assertWhole(Rule leased, List<Claim> duringFault) {
        long allowed = 0;
        try (ValkeyRateLimiter store = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofMillis(200)))
                .clientClock(clock).localLease(leased, 8, Duration.ofMinutes(10)).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(store)
                     .defaultPolicy(FailurePolicy.closed()).denyCache(0).build()) {
            // Grows the lease: 1, 2, then 4 of which 3 are left (the clock stands still, so none
            // ends; ten minutes, well within the window, so that closing gives back what is left).
            for (int i = 0; i < 8; i++) {
                assertThat(limiter.acquire(leased, "k").allowed()).isTrue();
                allowed++;
            }
            valkey.pause(PAUSE);
            Decisions refused = limiter.acquireAll(duringFault);
            assertThat(refused.allowed()).as("refused by the closed policy").isFalse();
            awaitPauseOver();
        }
        // Closed: what its lease still held went back; the clock stood still.
        try (ValkeyRateLimiter plain = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock).build()) {
            assertThat(plain.peek(leased, "k", 1).remaining()).as("what the leased rule has after %d allowed", allowed)
                    .isEqualTo(100 - allowed);
        }
    }

    /** A PING is held by the pause like any command: it answers once the pause is over. */
    private void awaitPauseOver() {
        try (Jedis jedis = valkey.connect()) {
            jedis.ping();
        }
    }
}
