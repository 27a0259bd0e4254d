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
 * A {@code fixed-window} lease taken less than its lease time before its window ends is cut to
 * that window. Closing the limiter before the window has ended still gives back what it holds
 * (README, "Local leases": closing gives back what it holds): the window still counts them.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseCloseWindowEdgeTest {

    private static final long WINDOW = Duration.ofHours(1).toMillis();
    /** 50 ms before a window (aligned to the epoch) ends: a 100 ms lease is cut to 50 ms. */
    private final ManualClock clock = new ManualClock((1_700_000_000_000L / WINDOW + 1) * WINDOW - 50);

    private final ValkeyServer valkey;

    LeaseCloseWindowEdgeTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void closingGivesBackALeaseCutToItsWindow() {
        Rule rule = Rule.of("edge", Algorithm.FIXED_WINDOW, 100, Duration.ofMillis(WINDOW));
        long allowed = 0;
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(rule, 8, Duration.ofMillis(100)).build()) {
            // Leases of 1, 2, then 4 of which 3 are left; the clock stands still.
            for (int i = 0; i < 8; i++) {
                assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
                allowed++;
            }
        }
        try (ValkeyRateLimiter plain = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock).build()) {
            assertThat(plain.peek(rule, "k", 1).remaining()).as("what the window has left after %d allowed", allowed)
                    .isEqualTo(100 - allowed);
        }
    }
}
