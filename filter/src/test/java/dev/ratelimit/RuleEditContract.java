package dev.ratelimit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every limiter must answer when a rule is edited on a deploy (same name, new limit,
 * window or burst) while keys hold state written under the old rule: the next decision never
 * grants more than the new rule allows for what was already taken, and never blocks longer
 * than the old state would have. The in-process limiter runs it in {@code filter/}, the
 * Valkey limiter the very same cases in {@code src-it/}.
 */
public abstract class RuleEditContract extends ManualClockLimiterTest {

    /** A time 2.5 s into a 10 s window, so that window edits do not fall on an edge by luck. */
    protected static final long T0 = 1_700_000_042_500L;

    @Override
    protected long startMillis() {
        return T0;
    }

    /** Every algorithm with every kind of edit of a rule of 10 per 10 s. */
    static Stream<Arguments> edits() {
        List<Arguments> edits = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            Rule old = Rule.of("edited", algorithm, 10, Duration.ofSeconds(10));
            edits.add(Arguments.of(old, "limit doubled", old(old, r -> rule(r, 20, r.window(), 20))));
            edits.add(Arguments.of(old, "limit halved", old(old, r -> rule(r, 5, r.window(), 5))));
            edits.add(Arguments.of(old, "window 10s to 1m", old(old, r -> rule(r, 10, Duration.ofMinutes(1), 10))));
            edits.add(Arguments.of(old, "window 10s to 1s", old(old, r -> rule(r, 10, Duration.ofSeconds(1), 10))));
            edits.add(Arguments.of(old, "same rate, 6x the window",
                    old(old, r -> rule(r, 60, Duration.ofMinutes(1), 60))));
            if (algorithm.hasBurst()) {
                edits.add(Arguments.of(old, "burst raised", old(old, r -> r.toBuilder().burst(25).build())));
                edits.add(Arguments.of(old, "burst lowered", old(old, r -> r.toBuilder().burst(4).build())));
            }
        }
        return edits.stream();
    }

    private static Rule old(Rule old, UnaryOperator<Rule> edit) {
        return edit.apply(old);
    }

    private static Rule rule(Rule like, long limit, Duration window, long burst) {
        return Rule.builder(like.name(), like.algorithm()).limit(limit).window(window)
                .burst(like.algorithm().hasBurst() ? burst : limit).countRejected(like.countRejected())
                .shadow(like.shadow()).build();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("edits")
    void theUnitsTakenStillCountAfterTheEdit(Rule old, String edit, Rule edited) {
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.acquire(old, "k").allowed()).isTrue();
        }
        // Right after the deploy, at the same instant: what was taken counts, in the new rule's units.
        long expected = Math.max(0, edited.capacity() - 3);
        assertThat(limiter.peek(edited, "k", 1).remaining()).as("remaining after %s", edit).isEqualTo(expected);
        int allowed = 0;
        for (int i = 0; i < 100; i++) {
            if (limiter.acquire(edited, "k").allowed()) {
                allowed++;
            }
        }
        assertThat(allowed).as("allowed after %s", edit).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("edits")
    void aBlockNeverOutlastsTheOldState(Rule old, String edit, Rule edited) {
        Decision last = null;
        for (int i = 0; i < 10; i++) {
            last = limiter.acquire(old, "k");
        }
        assertThat(last.allowed()).isTrue();
        Duration oldReset = last.resetAfter();
        clock.advance(1);
        Decision after = limiter.acquire(edited, "k");
        if (!after.allowed()) {
            assertThat(after.retryAfter()).as("retry-after after %s", edit)
                    .isLessThanOrEqualTo(oldReset.minusMillis(1));
            clock.advance(after.retryAfter().toMillis());
            assertThat(limiter.acquire(edited, "k").allowed()).as("at the announced retry-after").isTrue();
        }
        // Whatever the edit, once the old state would have been fully restored it is gone.
        clock.set(T0 + oldReset.toMillis());
        limiter.reset(edited, "other");
        Decision fresh = limiter.peek(edited, "untouched", 1);
        assertThat(fresh.remaining()).isEqualTo(edited.capacity());
    }

    /** The first example of the review: 100/s with 50 used, redeployed as 100/min. */
    @Test
    void aSlowerRateKeepsTheTokensLeft() {
        Rule perSecond = Rule.of("tb", Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(1));
        for (int i = 0; i < 50; i++) {
            limiter.acquire(perSecond, "k");
        }
        Rule perMinute = Rule.of("tb", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
        Decision next = limiter.acquire(perMinute, "k");
        assertThat(next.allowed()).isTrue();
        assertThat(next.remaining()).isEqualTo(49);
    }

    /** The second: 100/min with 1 used, rewritten as the same rate, 6000/h. */
    @Test
    void theSameRateInOtherUnitsKeepsTheQuota() {
        Rule perMinute = Rule.of("tb", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
        limiter.acquire(perMinute, "k");
        Rule perHour = Rule.of("tb", Algorithm.TOKEN_BUCKET, 6000, Duration.ofHours(1));
        Decision next = limiter.acquire(perHour, "k");
        assertThat(next.remaining()).isEqualTo(5998);
        // Two units owed refill at 6000/h: 1.2 s, not the next hour.
        assertThat(next.resetAfter()).isEqualTo(Duration.ofMillis(1200));
    }

    /** A lockout written under a faster rate is not stretched by a slower one. */
    @Test
    void aSlowerRateDoesNotStretchALockout() {
        Rule fast = Rule.of("gcra", Algorithm.GCRA, 10, Duration.ofSeconds(1)).withCountRejected(true);
        for (int i = 0; i < 30; i++) {
            limiter.acquire(fast, "k");
        }
        Decision locked = limiter.peek(fast, "k", 1);
        assertThat(locked.allowed()).isFalse();
        Rule slow = Rule.of("gcra", Algorithm.GCRA, 10, Duration.ofHours(1)).withCountRejected(true);
        Decision afterEdit = limiter.peek(slow, "k", 1);
        assertThat(afterEdit.allowed()).isFalse();
        assertThat(afterEdit.retryAfter()).isLessThanOrEqualTo(locked.resetAfter());
    }

    /**
     * The effective window after an edit: 4 units taken under the old rule, then the new
     * rule's t holds its promise (see {@link RateLimiterContract#assertTheEffectiveWindowHolds}).
     */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("edits")
    void theEffectiveWindowHoldsAfterAnEdit(Rule old, String edit, Rule edited) {
        assertThat(limiter.acquire(old, "k", 4).allowed()).isTrue();
        clock.advance(300);
        RateLimiterContract.assertTheEffectiveWindowHolds(limiter, clock, edited, "k", limiter.peek(edited, "k", 1));
    }

    /**
     * The same with the old rule's whole quota taken: the new rule's decision may then say
     * {@code r = 0}, and a client that takes nothing (all it can) must still find more at its
     * {@code t}, whether that decision was a peek or a rejected request.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("edits")
    void theEffectiveWindowHoldsAfterAnEditOfAnExhaustedKey(Rule old, String edit, Rule edited) {
        // Promise 1: t is the effective window: at t more quota comes (r = 0 here: taking r is taking nothing).
        assertThat(limiter.acquire(old, "k", old.capacity()).allowed()).isTrue();
        clock.advance(300);
        RateLimiterContract.assertTheEffectiveWindowHolds(limiter, clock, edited, "k", limiter.peek(edited, "k", 1));
        clock.set(T0 + 300);
        limiter.reset(edited, "k");
        assertThat(limiter.acquire(old, "k", old.capacity()).allowed()).isTrue();
        clock.advance(300);
        Decision rejected = limiter.acquire(edited, "k", edited.capacity());
        RateLimiterContract.assertTheEffectiveWindowHolds(limiter, clock, edited, "k", rejected);
    }

    /**
     * A sliding log's unit taken under a short window and cancelled after that window, once the
     * rule counts it for a longer one: what the cancel says it gave back is what comes back. It
     * said nothing (the unit had left its own window), so the decision before it, {@code r = 0}
     * for the longer window, still holds (a checker's seed on the cluster found the unit
     * removed all the same).
     */
    @Test
    void aCancelAfterItsOwnWindowGivesNothingBackWhenAnEditCountsItLonger() {
        Rule shortWindow = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofMillis(50));
        Reservation reserved = limiter.reserve(shortWindow, "k");
        assertThat(reserved.allowed()).isTrue();
        Rule longWindow = Rule.of("log", Algorithm.SLIDING_LOG, 2, Duration.ofSeconds(1));
        Decision full = limiter.acquire(longWindow, "k");
        assertThat(full.allowed()).isTrue();
        assertThat(full.remaining()).isZero();
        clock.advance(59);
        List<String> given = reserved.cancel();
        Decision next = limiter.acquire(longWindow, "k");
        assertThat(next.allowed()).as("allowed after a cancel that gave back %s, within t of a decision that said r = 0",
                given).isEqualTo(!given.isEmpty());
    }
}
