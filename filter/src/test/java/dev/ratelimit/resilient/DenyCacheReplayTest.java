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
 * The deny cache of {@link ResilientRateLimiter} replays a rejection only while the state it was
 * decided on is unchanged but for time: units taken since by a request of another cost make its
 * retry-after early, so the store is asked again.
 */
class DenyCacheReplayTest {

    private static final long T0 = 1_700_000_000_000L;

    /**
     * A sliding log of 3 a second holds a unit from t = 0; a cost of 3 at t = 100 must wait for it
     * to leave (t = 1,000) and is remembered. A cost of 1 at t = 200 is allowed: now the cost of 3
     * waits for that unit too (t = 1,200), and a replay of the remembered rejection at t = 300
     * would say 700 ms, when at t = 1,000 the request is still rejected.
     */
    @Test
    void aRejectionIsNotReplayedOnceARequestOfAnotherCostTookUnits() {
        ManualClock clock = new ManualClock(T0);
        Rule log = Rule.of("log", Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(1));
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(LocalRateLimiter.withClock(clock, 100))
                .clock(clock).build()) {
            assertThat(limiter.acquire(log, "k").allowed()).isTrue();
            clock.advance(100);
            assertThat(limiter.acquire(log, "k", 3).retryAfter()).isEqualTo(Duration.ofMillis(900));
            clock.advance(100);
            assertThat(limiter.acquire(log, "k", 1).allowed()).isTrue();
            clock.advance(100);
            Decision again = limiter.acquire(log, "k", 3);
            assertThat(again.allowed()).isFalse();
            assertThat(again.retryAfter()).as("until the unit of t = 200 leaves").isEqualTo(Duration.ofMillis(900));
        }
    }

    /** The same cost, with nothing taken since, is still answered from the cache, times moved on. */
    @Test
    void anUntouchedKeysRejectionIsStillReplayed() {
        ManualClock clock = new ManualClock(T0);
        Rule log = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofSeconds(1));
        LocalRateLimiter store = LocalRateLimiter.withClock(clock, 100);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build()) {
            assertThat(limiter.acquire(log, "k").allowed()).isTrue();
            clock.advance(100);
            assertThat(limiter.acquire(log, "k").retryAfter()).isEqualTo(Duration.ofMillis(900));
            // Gone from the store, not from the cache: only a replay still rejects.
            store.reset(log, "k");
            clock.advance(100);
            Decision replayed = limiter.acquire(log, "k");
            assertThat(replayed.allowed()).isFalse();
            assertThat(replayed.retryAfter()).isEqualTo(Duration.ofMillis(800));
        }
    }
}
