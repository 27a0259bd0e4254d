package dev.ratelimit.resilient;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.PausingStore;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deny cache of {@link ResilientRateLimiter} must not remember a rejection the store decided
 * before a change of the key that this process made while the rejection was on its way back: a
 * reset (or units given back) that lands between the store's answer and the cache's write leaves
 * room in the store, and a remembered rejection would turn away the callers it is for.
 *
 * <p>The store here answers, then lets another thread finish its change before handing the
 * answer back ({@link PausingStore}): the interleaving is forced, not hoped for.
 */
class DenyCacheRaceTest {

    private static final long T0 = 1_700_000_000_000L;

    /**
     * Promise: the deny cache never turns away a request the store would allow (forgotten on a
     * reset). A fixed window of 1 an hour is full; a rejection is on its way back when another
     * thread resets the key; the next request finds room in the store.
     */
    @Test
    void aRejectionDecidedBeforeAConcurrentResetIsNotRemembered() {
        ManualClock clock = new ManualClock(T0);
        Rule hourly = Rule.of("hourly", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
        PausingStore store = new PausingStore(LocalRateLimiter.withClock(clock, 100));
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build()) {
            assertThat(limiter.acquire(hourly, "k").allowed()).isTrue();
            store.afterNextAnswer(false, PausingStore.onOtherThread(() -> limiter.reset(hourly, "k")));
            assertThat(limiter.acquire(hourly, "k").allowed()).as("decided before the reset").isFalse();
            assertThat(store.peek(hourly, "k", 1).allowed()).as("the store after the reset").isTrue();

            assertThat(limiter.acquire(hourly, "k").allowed())
                    .as("not a replay of the rejection the reset made wrong").isTrue();
        }
    }

    /**
     * Promise: the deny cache never turns away a request the store would allow (forgotten on a
     * reset). The other order: the reset has cleared the cache but not yet the store when a
     * request is decided on the full window; the reset then empties the store.
     */
    @Test
    void aRejectionDecidedWhileAResetIsUnderWayIsNotRemembered() {
        ManualClock clock = new ManualClock(T0);
        Rule hourly = Rule.of("hourly", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
        PausingStore store = new PausingStore(LocalRateLimiter.withClock(clock, 100));
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build()) {
            assertThat(limiter.acquire(hourly, "k").allowed()).isTrue();
            boolean[] rejected = new boolean[1];
            store.beforeNextReset(PausingStore.onOtherThread(() -> rejected[0] = !limiter.acquire(hourly, "k").allowed()));
            limiter.reset(hourly, "k");
            assertThat(rejected[0]).as("decided before the store was reset").isTrue();
            assertThat(store.peek(hourly, "k", 1).allowed()).as("the store after the reset").isTrue();

            assertThat(limiter.acquire(hourly, "k").allowed())
                    .as("not a replay of the rejection the reset made wrong").isTrue();
        }
    }
}
