package dev.ratelimit.resilient;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class DenyCacheTest {

    private static final Rule LOGIN = Rule.of("login", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));
    private static final Rule API = Rule.of("api", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));
    /** An hour: the retry-afters below are seconds, so only the retry-after ends a replay. */
    private static final long HOLD_LONGER_THAN_ANY_RETRY = 3_600_000;

    private static Decision rejection(long remaining, long resetMillis, long retryMillis) {
        return Verdicts.rejected("login", 5, remaining, Duration.ofMillis(resetMillis), Duration.ofMillis(retryMillis));
    }

    @Test
    void deniesUntilTheRetryAfterThenForgets() {
        DenyCache cache = new DenyCache(10, HOLD_LONGER_THAN_ANY_RETRY);
        cache.deny(Claim.of(LOGIN, "user:alice"), rejection(0, 1_000, 1_000), 0);
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice"), 400)).map(d -> d.retryAfter().toMillis()).contains(600L);
        assertThat(cache.denied(Claim.of(LOGIN, "user:bob"), 400)).isEmpty();
        assertThat(cache.denied(Claim.of(API, "user:alice"), 400)).isEmpty();
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice"), 1_000)).isEmpty();
        assertThat(cache.size()).isZero();
    }

    /** A smaller request is not held to the rejection of a bigger one. */
    @Test
    void aRejectionHoldsOnlyForItsCost() {
        DenyCache cache = new DenyCache(10, HOLD_LONGER_THAN_ANY_RETRY);
        cache.deny(Claim.of(LOGIN, "user:alice", 5), rejection(0, 1_000, 1_000), 0);
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice", 5), 400)).isPresent();
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice", 1), 400)).isEmpty();
    }

    /** A caller on a bigger plan, or a limit raised since, is not held to the old limit's rejection. */
    @Test
    void aRejectionHoldsOnlyForTheRuleItWasDecidedUnder() {
        DenyCache cache = new DenyCache(10, HOLD_LONGER_THAN_ANY_RETRY);
        cache.deny(Claim.of(LOGIN, "user:alice"), rejection(0, 1_000, 1_000), 0);
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice"), 400)).isPresent();
        Rule raised = Rule.of("login", Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        assertThat(cache.denied(Claim.of(raised, "user:alice"), 400))
                .isEmpty();
    }

    /** The review's case: the store said r=1;t=20 with a retry-after of 10 s; the cache must say so too. */
    @Test
    void repliesWhatTheStoreSaidWithItsTimesMovedOn() {
        DenyCache cache = new DenyCache(10, HOLD_LONGER_THAN_ANY_RETRY);
        cache.deny(Claim.of(LOGIN, "user:alice"), rejection(1, 20_000, 10_000), 5_000);
        Decision replay = cache.denied(Claim.of(LOGIN, "user:alice"), 7_000).orElseThrow();
        assertThat(replay.remaining()).isEqualTo(1);
        assertThat(replay.resetAfter()).isEqualTo(Duration.ofMillis(18_000));
        assertThat(replay.retryAfter()).isEqualTo(Duration.ofMillis(8_000));
        assertThat(replay.limit()).isEqualTo(5);
    }

    /**
     * The store decided somewhere between the asking (100) and the answer (105): the retry-after
     * is counted from the answer, never early; the window of no room from the asking, never too
     * long; once that window is over the store is asked again (the next unit may be free).
     */
    @Test
    void countsTheRetryAfterFromTheAnswerAndTheWindowOfNoRoomFromTheAsking() {
        DenyCache cache = new DenyCache(10, HOLD_LONGER_THAN_ANY_RETRY);
        Decision rejected = rejection(0, 40, 30).toBuilder().effectiveWindow(Duration.ofMillis(10)).build();
        cache.deny(Claim.of(LOGIN, "user:alice"), rejected, 100, 105, cache.mark());
        Decision replay = cache.denied(Claim.of(LOGIN, "user:alice"), 106).orElseThrow();
        assertThat(replay.retryAfter()).isEqualTo(Duration.ofMillis(29));
        assertThat(replay.effectiveWindow()).isEqualTo(Duration.ofMillis(4));
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice"), 110)).as("its window of no room is over").isEmpty();
    }

    @Test
    void neverHoldsMoreThanItsBound() {
        DenyCache cache = new DenyCache(100, HOLD_LONGER_THAN_ANY_RETRY);
        long now = System.currentTimeMillis();
        for (int i = 0; i < 100_000; i++) {
            cache.deny(Claim.of(API, "ip:" + i), rejection(0, 60_000, 60_000), now);
        }
        assertThat(cache.size()).isEqualTo(100);
    }

    /**
     * Another instance may give units back or reset the key, which this cache cannot see: a
     * rejection is replayed for no longer than the hold, whatever its retry-after.
     */
    @Test
    void aRejectionIsReplayedNoLongerThanTheHold() {
        DenyCache cache = new DenyCache(10, 500);
        cache.deny(Claim.of(LOGIN, "user:alice"), rejection(0, 60_000, 60_000), 0);
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice"), 499)).map(d -> d.retryAfter().toMillis())
                .as("the store's retry-after, moved on").contains(59_501L);
        assertThat(cache.denied(Claim.of(LOGIN, "user:alice"), 500)).as("the hold is over: ask the store").isEmpty();
        assertThat(cache.size()).isZero();
    }
}
