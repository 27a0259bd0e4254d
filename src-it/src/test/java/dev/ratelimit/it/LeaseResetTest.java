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
 * A {@code reset} made on one instance while another holds a lease of the key: after the reset
 * the key starts from a full limit, and the other instance's lease, taken from the state the
 * reset deleted, must not be admitted on top of it.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseResetTest {

    private static final long LIMIT = 20;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseResetTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Promise: after a reset, never more than the limit in the window, whichever instance admits. */
    @Test
    void aLeaseTakenBeforeAResetElsewhereIsNotAdmittedOnTopOfTheFreshLimit() {
        Rule rule = Rule.of("reset", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));
        try (ValkeyRateLimiter holder = leasing(); ValkeyRateLimiter other = leasing();
             ValkeyRateLimiter plain = ValkeyRateLimiter.builder()
                     .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock).build()) {
            // Leases of 1, 2 and 4: 8 asks leave the last lease holding units.
            for (int i = 0; i < 8; i++) {
                assertThat(holder.acquire(rule, "k").allowed()).isTrue();
            }
            // What the holder's peek counts beyond the store's: the units its lease holds.
            long held = holder.peek(rule, "k", 1).remaining() - plain.peek(rule, "k", 1).remaining();
            assertThat(held).as("units the holder's lease holds before the reset").isPositive();
            other.reset(rule, "k");
            long afterReset = 0;
            for (int i = 0; i < 2 * LIMIT; i++) {
                afterReset += other.acquire(rule, "k").allowed() ? 1 : 0;
                afterReset += holder.acquire(rule, "k").allowed() ? 1 : 0;
            }
            assertThat(afterReset).as("admitted after the reset (the holder's lease held %d)", held)
                    .isLessThanOrEqualTo(LIMIT);
        }
    }

    private ValkeyRateLimiter leasing() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease("reset", 8, Duration.ofMillis(500)).build();
    }
}
