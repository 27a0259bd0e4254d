package dev.ratelimit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reservations given back, with exact numbers, on every algorithm: what a cancel restores,
 * that it never restores more than was taken nor makes a state better than empty, and that a
 * window that has rolled over is left alone. The in-process limiter runs it in {@code filter/},
 * the Valkey limiter the same cases in {@code src-it/}.
 */
public abstract class ReservationContract extends ManualClockLimiterTest {

    /** Aligned to the 10 s window, so offsets read as window phases. */
    protected static final long T0 = 1_700_000_040_000L;
    private static final Duration WINDOW = Duration.ofSeconds(10);

    @Override
    protected long startMillis() {
        return T0;
    }

    private static Rule rule(Algorithm algorithm, long limit) {
        return Rule.of("res-" + algorithm.id(), algorithm, limit, WINDOW);
    }

    private int allowedOf(Rule rule, String key, int n) {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            allowed += limiter.acquire(rule, key).allowed() ? 1 : 0;
        }
        return allowed;
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aCancelledReservationGivesItsUnitBackAndNoMore(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation first = limiter.reserve(rule, "k");
        assertThat(first.allowed()).isTrue();
        assertThat(allowedOf(rule, "k", 4)).isEqualTo(4);
        assertThat(limiter.acquire(rule, "k").allowed()).as("the limit is reached").isFalse();

        assertThat(first.cancel()).containsExactly(rule.name());
        assertThat(limiter.peek(rule, "k", 1).remaining()).as("one unit back").isEqualTo(1);
        assertThat(allowedOf(rule, "k", 3)).as("exactly one more").isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
    void aCommittedReservationKeepsItsUnitsAndSettlesOnce(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation kept = limiter.reserve(rule, "k");
        assertThat(kept.commit()).isTrue();
        assertThat(kept.cancel()).as("settled already").isEmpty();
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(4);

        Reservation twice = limiter.reserve(rule, "k");
        assertThat(twice.cancel()).containsExactly(rule.name());
        assertThat(twice.cancel()).as("a second cancel gives nothing").isEmpty();
        assertThat(twice.commit()).isFalse();
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(4);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aCostIsGivenBackWhole(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation three = limiter.reserve(rule, "k", 3);
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(2);
        assertThat(three.cancel()).containsExactly(rule.name());
        assertThat(allowedOf(rule, "k", 6)).isEqualTo(5);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRejectedReservationHasNothingToGiveBack(Algorithm algorithm) {
        Rule rule = rule(algorithm, 2);
        assertThat(allowedOf(rule, "k", 2)).isEqualTo(2);
        Reservation rejected = limiter.reserve(rule, "k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.decisions().retryAfter()).isPositive();
        assertThat(rejected.cancel()).isEmpty();
        assertThat(limiter.acquire(rule, "k").allowed()).isFalse();
    }

    /** Other requests' units, taken in the same millisecond, stay counted. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void givingBackTakesOnlyThisReservationsUnits(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
        Reservation mine = limiter.reserve(rule, "k", 2);
        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
        clock.advance(1);
        assertThat(mine.cancel()).containsExactly(rule.name());
        assertThat(allowedOf(rule, "k", 5)).as("5 - 2 others").isEqualTo(3);
    }

    /** A bucket that refilled meanwhile is not made fuller than its burst. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aBucketNeverHoldsMoreThanItsBurst(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation two = limiter.reserve(rule, "k", 2);
        // 5 per 10 s: after 3 s, 1.5 of the 2 units have come back by refilling.
        clock.advance(3_000);
        assertThat(two.cancel()).containsExactly(rule.name());
        assertThat(allowedOf(rule, "k", 7)).as("a full bucket, not 5.5").isEqualTo(5);
    }

    /** After a full refill there is nothing left to give back. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aRefilledBucketHasNothingToGiveBack(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation one = limiter.reserve(rule, "k");
        clock.advance(WINDOW.toMillis());
        assertThat(one.cancel()).isEmpty();
        assertThat(allowedOf(rule, "k", 6)).isEqualTo(5);
    }

    /**
     * Units the bucket refilled after they were taken are not given back again, whatever was
     * taken since: 10 reserved at 0 s, 10 allowed at 10 s, the 10 reservations then cancelled
     * must not make room for 10 more (20 in no time under a burst of 10).
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void unitsRefilledSinceTheyWereTakenAreNotGivenBackAgain(Algorithm algorithm) {
        Rule rule = rule(algorithm, 10);
        List<Reservation> early = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Reservation reservation = limiter.reserve(rule, "k");
            assertThat(reservation.allowed()).isTrue();
            early.add(reservation);
        }
        clock.advance(WINDOW.toMillis());
        assertThat(allowedOf(rule, "k", 10)).as("refilled").isEqualTo(10);
        for (Reservation reservation : early) {
            assertThat(reservation.cancel()).as("refilled already: nothing owed").isEmpty();
        }
        assertThat(allowedOf(rule, "k", 10)).as("no room made by the late cancels").isZero();

        // 1 unit a second: of 4 units reserved 2 s ago, 2 have refilled and 2 are still owed.
        clock.advance(WINDOW.toMillis());
        Reservation four = limiter.reserve(rule, "k", 4);
        clock.advance(2_000);
        assertThat(four.cancel()).containsExactly(rule.name());
        assertThat(allowedOf(rule, "k", 11)).as("a full bucket again, no more").isEqualTo(10);
    }

    /**
     * Another reservation given back first does not make a later one's refilled units owed
     * again: 5 + 5 reserved, the first 5 cancelled, 5 s later the bucket is full again (the
     * second 5 refilled), 10 taken, and the second 5 cancelled must then give nothing.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void anEarlierRefundDoesNotMakeRefilledUnitsOwedAgain(Algorithm algorithm) {
        Rule rule = rule(algorithm, 10);
        Reservation first = limiter.reserve(rule, "k", 5);
        Reservation second = limiter.reserve(rule, "k", 5);
        assertThat(first.cancel()).containsExactly(rule.name());
        clock.advance(5_000);
        assertThat(limiter.reserve(rule, "k", 10).commit()).isTrue();
        assertThat(second.cancel()).as("its 5 units refilled in the 5 s").isEmpty();
        assertThat(allowedOf(rule, "k", 10)).as("10 taken at this instant already").isZero();
    }

    /**
     * A bucket edited to a faster rate has refilled old units faster than the old rule says: a
     * reservation of the old rule given back after a write by the new one gives nothing, or it
     * would give back units taken since (14 at one instant under a burst of 10).
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aBucketEditedToAFasterRateGivesNothingBackForTheOldRule(Algorithm algorithm) {
        Rule slow = rule(algorithm, 10);
        Rule fast = Rule.of(slow.name(), algorithm, 10, Duration.ofSeconds(1));
        Reservation old = limiter.reserve(slow, "k", 5);
        clock.advance(1_000);
        assertThat(limiter.reserve(fast, "k", 10).commit()).as("refilled at the new rate").isTrue();
        assertThat(old.cancel()).isEmpty();
        assertThat(allowedOf(fast, "k", 10)).as("10 taken at this instant already").isZero();
    }

    /**
     * A shadow rule that counts rejections records the attempt of a request it would reject; the
     * request goes through, and giving it back must not take that attempt off: recording it
     * pushed an allowed request's entry out of the full log.
     */
    @Test
    void aShadowRulesRecordedAttemptIsNotGivenBack() {
        Rule shadow = Rule.of("res-shadow-log", Algorithm.SLIDING_LOG, 2, WINDOW).withShadow(true)
                .withCountRejected(true);
        Rule enforcing = rule(Algorithm.FIXED_WINDOW, 100);
        assertThat(allowedOf(shadow, "k", 2)).isEqualTo(2);
        Reservation through = limiter.reserveAll(List.of(Claim.of(enforcing, "k"), Claim.of(shadow, "k")));
        assertThat(through.allowed()).as("a shadow rule never rejects").isTrue();
        assertThat(through.decisions().all().get(1).allowed()).as("but it would have").isFalse();
        assertThat(through.cancel()).containsExactly(enforcing.name());
        assertThat(limiter.peek(shadow, "k", 1).remaining()).as("still two in the window").isZero();
    }

    /** A window that has rolled over is left as it is: the new window is not credited. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER"})
    void aWindowThatRolledOverIsNotTouched(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation old = limiter.reserve(rule, "k");
        clock.advance(WINDOW.toMillis());
        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
        long before = limiter.peek(rule, "k", 1).remaining();
        assertThat(old.cancel()).isEmpty();
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(before);
    }

    /** A state reset (or expired) since has nothing to give back: never better than empty. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aResetStateIsNotMadeBetterThanEmpty(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation first = limiter.reserve(rule, "k", 2);
        limiter.reset(rule, "k");
        assertThat(first.cancel()).isEmpty();
        assertThat(allowedOf(rule, "k", 6)).isEqualTo(5);
    }

    /**
     * A reservation older than a reset gives back nothing of what was taken since, in the same
     * millisecond: the reset dropped its units, and the new state (a count or a debt started
     * again, log entries and leases whose sequence restarted) holds only the new ones. Settlement
     * it, even by a commit, releases none of the new leases.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRefundAcrossAResetGivesBackNothingTakenSince(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Reservation old = limiter.reserve(rule, "k", 2);
        limiter.reset(rule, "k");
        Reservation taken = limiter.reserve(rule, "k", 3);
        assertThat(taken.allowed()).isTrue();
        assertThat(old.cancel()).as("nothing of its own is left").isEmpty();
        assertThat(allowedOf(rule, "k", 6)).as("the 3 taken since still count").isEqualTo(2);
    }

    /**
     * A reservation whose units an edit dropped gives back nothing of what was taken since in the
     * window it charged: a window shortened by the edit ended the old count, a count started
     * again for that window holds only the new units.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER"})
    void aRefundAcrossAnEditGivesBackNothingTakenSince(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Rule shorter = Rule.of(rule.name(), algorithm, 5, Duration.ofSeconds(1));
        Reservation old = limiter.reserve(rule, "k");
        clock.advance(2_000);
        assertThat(limiter.acquire(shorter, "k").allowed()).isTrue();
        clock.advance(1_000);
        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
        long before = limiter.peek(rule, "k", 1).remaining();
        assertThat(old.cancel()).as("its unit is gone with the shorter window").isEmpty();
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(before);
    }

    @Test
    void onlyTheRulesAskedForAreGivenBack() {
        Rule failures = Rule.of("failures", Algorithm.SLIDING_LOG, 3, WINDOW);
        Rule all = Rule.of("all", Algorithm.TOKEN_BUCKET, 3, WINDOW);
        Reservation both = limiter.reserveAll(List.of(Claim.of(failures, "k"), Claim.of(all, "k")));
        assertThat(both.allowed()).isTrue();
        assertThat(both.cancel(rule -> rule.name().equals("failures"))).containsExactly("failures");
        assertThat(limiter.peek(failures, "k", 1).remaining()).isEqualTo(3);
        assertThat(limiter.peek(all, "k", 1).remaining()).isEqualTo(2);
    }

    @Test
    void aShadowRulesUnitsAreGivenBackWithTheOthers() {
        Rule enforcing = Rule.of("enforcing", Algorithm.FIXED_WINDOW, 3, WINDOW);
        Rule shadow = Rule.of("shadow", Algorithm.FIXED_WINDOW, 3, WINDOW).withShadow(true);
        Reservation both = limiter.reserveAll(List.of(Claim.of(enforcing, "k"), Claim.of(shadow, "k")));
        assertThat(both.cancel()).containsExactlyInAnyOrder("enforcing", "shadow");
        assertThat(limiter.peek(enforcing, "k", 1).remaining()).isEqualTo(3);
        assertThat(limiter.peek(shadow, "k", 1).remaining()).isEqualTo(3);
    }

    /** A lease is released by settling either way; one never settled holds its slot until the lease timeout. */
    @Test
    void aLeaseIsReleasedWhenItsWorkEndsAndTimesOutWhenItsHolderNeverSaysSo() {
        Rule inFlight = Rule.of("in-flight", Algorithm.CONCURRENCY, 2, Duration.ofSeconds(60));
        Reservation committed = limiter.reserve(inFlight, "k");
        Reservation cancelled = limiter.reserve(inFlight, "k");
        Reservation third = limiter.reserve(inFlight, "k");
        assertThat(third.allowed()).as("two in progress already").isFalse();
        assertThat(third.decisions().retryAfter()).as("the first lease's timeout, an upper bound")
                .isEqualTo(Duration.ofSeconds(60));
        assertThat(committed.commit()).isTrue();
        assertThat(limiter.peek(inFlight, "k", 1).remaining()).isEqualTo(1);
        assertThat(cancelled.cancel()).containsExactly("in-flight");
        assertThat(limiter.peek(inFlight, "k", 1).remaining()).isEqualTo(2);

        // A holder that dies: its leases come back at the timeout, not 1 ms before.
        assertThat(limiter.reserve(inFlight, "k").allowed()).isTrue();
        clock.advance(1);
        Reservation orphan = limiter.reserve(inFlight, "k");
        assertThat(orphan.allowed()).isTrue();
        assertThat(limiter.acquire(inFlight, "k").allowed()).isFalse();
        clock.advance(60_000 - 2);
        assertThat(limiter.peek(inFlight, "k", 1).allowed()).as("1 ms before the first timeout").isFalse();
        clock.advance(1);
        assertThat(limiter.peek(inFlight, "k", 1).remaining()).as("at the first timeout").isEqualTo(1);
        clock.advance(1);
        assertThat(orphan.cancel()).as("a timed-out lease was given back already").isEmpty();
        assertThat(limiter.peek(inFlight, "k", 1).remaining()).isEqualTo(2);
    }

    /** A lease keeps the timeout it was taken with when the rule's timeout is edited. */
    @Test
    void aLeaseKeepsItsTimeoutAcrossAnEdit() {
        Rule shortLeases = Rule.of("leases", Algorithm.CONCURRENCY, 1, Duration.ofSeconds(10));
        Rule longLeases = Rule.of("leases", Algorithm.CONCURRENCY, 1, Duration.ofSeconds(100));
        assertThat(limiter.reserve(shortLeases, "k").allowed()).isTrue();
        assertThat(limiter.acquire(longLeases, "k").allowed()).isFalse();
        clock.advance(10_000);
        assertThat(limiter.reserve(longLeases, "k").allowed()).isTrue();
    }
}
