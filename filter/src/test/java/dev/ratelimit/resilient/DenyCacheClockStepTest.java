package dev.ratelimit.resilient;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deny cache replays a rejection for at most its hold (README, "Deny cache": no rejection is
 * replayed for longer than {@code ratelimit.deny-cache.max-hold}), also when the wall clock it
 * reads is stepped back (an NTP correction): room made elsewhere is then seen within the hold,
 * not within the hold plus the step.
 */
class DenyCacheClockStepTest {

    private static final long T0 = 1_700_000_000_000L;

    /**
     * A sliding log of 1 an hour rejects at t = 100 (retry-after about an hour, held 1 s); the
     * key is then reset in the store (another instance's reset); the clock is stepped back 10 s.
     * 1.5 s after the rejection the cache must no longer replay it.
     */
    @Test
    void aClockSteppedBackDoesNotStretchTheHold() {
        // Promise 6: the deny cache replays a rejection for at most ratelimit.deny-cache.max-hold (1 s).
        ManualClock clock = new ManualClock(T0);
        Rule log = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofHours(1));
        LocalRateLimiter store = LocalRateLimiter.withClock(new ManualClock(T0), 100);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock)
                .denyCacheHold(Duration.ofSeconds(1)).build()) {
            assertThat(limiter.acquire(log, "k").allowed()).isTrue();
            clock.advance(100);
            assertThat(limiter.acquire(log, "k").allowed()).as("rejected and remembered").isFalse();
            // Room made where this cache cannot see it.
            store.reset(log, "k");
            clock.advance(-10_000);
            clock.advance(1_500);
            Decision later = limiter.acquire(log, "k");
            assertThat(later.allowed()).as("1.5 s after the rejection, with the clock stepped back 10 s meanwhile: "
                    + "the store, which has room, must be asked (replayed: %s)", later).isTrue();
        }
    }
}
