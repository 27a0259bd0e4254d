package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a decision served from a lease says remains (README, "Local leases"): with one instance
 * exactly what is left; with others, what Valkey held at the lease's take plus what the lease
 * holds, as of that take and never older than the lease's time; what the lease holds is given.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseRemainingTest {

    private static final Duration LEASE_TIME = Duration.ofMillis(500);

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final Rule rule = Rule.of("left", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));

    LeaseRemainingTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** One instance: every decision, from a lease or from Valkey, says how many more are allowed. */
    @Test
    void withOneInstanceEveryDecisionSaysExactlyWhatRemains() {
        try (ValkeyRateLimiter holder = leasing()) {
            for (int i = 0; i < 8; i++) {
                assertThat(holder.acquire(rule, "k").allowed()).isTrue();
            }
            Decision promise = holder.acquire(rule, "k");
            assertThat(promise.allowed()).isTrue();
            long given = 0;
            while (given <= promise.remaining() && holder.acquire(rule, "k").allowed()) {
                given++;
            }
            assertThat(given).as("requests allowed after a decision that said %d remain", promise.remaining())
                    .isEqualTo(promise.remaining());
        }
    }

    /**
     * Another instance took what Valkey held: the holder still gives what its lease holds; what it
     * said of Valkey's share is as of its take, and once its lease's time is over it says 0.
     */
    @Test
    void afterAnotherInstanceDrainedTheStoreALeaseGivesWhatItHoldsAndThenSaysNoneRemain() {
        try (ValkeyRateLimiter holder = leasing(); ValkeyRateLimiter other = leasing(); ValkeyRateLimiter plain = plain()) {
            for (int i = 0; i < 8; i++) {
                assertThat(holder.acquire(rule, "k").allowed()).isTrue();
            }
            long held = holder.peek(rule, "k", 1).remaining() - plain.peek(rule, "k", 1).remaining();
            assertThat(held).as("units the holder's lease holds").isPositive();
            while (other.acquire(rule, "k").allowed()) {
                // The other instance takes all the store holds.
            }
            long given = 0;
            while (given <= held && holder.acquire(rule, "k").allowed()) {
                given++;
            }
            assertThat(given).as("allowed by the holder after the drain").isEqualTo(held);
            clock.advance(LEASE_TIME.toMillis());
            Decision after = holder.acquire(rule, "k");
            assertThat(after.allowed()).isFalse();
            assertThat(after.remaining()).as("remaining once the lease's time is over").isZero();
        }
    }

    /**
     * A peek answers what a request of that cost would be answered: with one instance, a bucket's
     * lease never makes it a refusal (checker seed 3037: a GCRA of burst 6 leasing 4, three units
     * taken, then a peek of 2 refused while three remained).
     */
    @Test
    void aPeekIsNotRefusedForTheInstancesOwnLease() {
        Rule gcra = Rule.gcra("gcra", 20, Duration.ofMinutes(1), 6);
        try (ValkeyRateLimiter holder = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(gcra, 4, Duration.ofMillis(20)).build()) {
            assertThat(holder.acquire(gcra, "b").allowed()).isTrue();
            assertThat(holder.acquireAll(java.util.List.of(dev.ratelimit.Claim.of(gcra, "b", 2))).allowed()).isTrue();
            Decision peeked = holder.peek(gcra, "b", 2);
            assertThat(peeked.allowed()).as("a peek of 2 with 3 of 6 left: %s", peeked).isTrue();
            assertThat(holder.acquireAll(java.util.List.of(dev.ratelimit.Claim.of(gcra, "b", 2))).allowed())
                    .as("the request the peek promised").isTrue();
        }
    }

    private ValkeyRateLimiter plain() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).build();
    }

    private ValkeyRateLimiter leasing() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(rule, 8, LEASE_TIME).build();
    }
}
