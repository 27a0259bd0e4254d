package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
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
 * A {@code reset} made on one instance while another holds a lease of the key (README, "Local
 * leases"): the lease was taken from the state the reset deleted, and serves on until its time
 * ends, so up to its units may be admitted on top of the fresh limit then, and none after.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseResetTest {

    private static final long LIMIT = 20;
    private static final long LEASE = 8;
    private static final Duration LEASE_TIME = Duration.ofMillis(500);

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final Rule rule = Rule.of("reset", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));

    LeaseResetTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** The bound: the limit, plus what the other instance's lease held at the reset. */
    @Test
    void aLeaseTakenBeforeAResetElsewhereAdmitsAtMostItsUnitsOnTopOfTheFreshLimit() {
        try (ValkeyRateLimiter holder = leasing(); ValkeyRateLimiter other = leasing(); ValkeyRateLimiter plain = plain()) {
            long held = leaseBeforeReset(holder, plain);
            other.reset(rule, "k");
            long afterReset = admittedByBoth(holder, other);
            assertThat(afterReset).as("admitted after the reset (the holder's lease held %d)", held)
                    .isGreaterThanOrEqualTo(LIMIT).isLessThanOrEqualTo(LIMIT + held);
        }
    }

    /** Once the lease's time is over, the fresh limit is all there is. */
    @Test
    void aLeaseTakenBeforeAResetElsewhereServesNothingOnceItsTimeIsOver() {
        try (ValkeyRateLimiter holder = leasing(); ValkeyRateLimiter other = leasing(); ValkeyRateLimiter plain = plain()) {
            long held = leaseBeforeReset(holder, plain);
            other.reset(rule, "k");
            clock.advance(LEASE_TIME.toMillis());
            assertThat(admittedByBoth(holder, other)).as("admitted after the reset and the lease's time (it held %d)", held)
                    .isEqualTo(LIMIT);
        }
    }

    /** Leases of 1, 2 and 4: 8 asks leave the last lease holding units; returns how many. */
    private long leaseBeforeReset(ValkeyRateLimiter holder, ValkeyRateLimiter plain) {
        for (int i = 0; i < 8; i++) {
            assertThat(holder.acquire(rule, "k").allowed()).isTrue();
        }
        // What the holder's peek counts beyond the store's: the units its lease holds.
        long held = holder.peek(rule, "k", 1).remaining() - plain.peek(rule, "k", 1).remaining();
        assertThat(held).as("units the holder's lease holds before the reset").isPositive().isLessThanOrEqualTo(LEASE);
        return held;
    }

    private long admittedByBoth(ValkeyRateLimiter holder, ValkeyRateLimiter other) {
        long admitted = 0;
        for (int i = 0; i < 2 * LIMIT; i++) {
            admitted += other.acquire(rule, "k").allowed() ? 1 : 0;
            admitted += holder.acquire(rule, "k").allowed() ? 1 : 0;
        }
        return admitted;
    }

    private ValkeyRateLimiter plain() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).build();
    }

    private ValkeyRateLimiter leasing() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(rule, LEASE, LEASE_TIME).build();
    }
}
