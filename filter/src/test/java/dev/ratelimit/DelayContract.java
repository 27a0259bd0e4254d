package dev.ratelimit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.internal.QueuePlace;
import dev.ratelimit.internal.Refundable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Requests admitted for a slot to come ({@link Rule#maxDelay()}), with exact numbers: each
 * delayed request's slot is when the bucket has refilled enough for it, in order of arrival;
 * past the max delay a rejection whose retry-after is when it would be delayed no longer; a
 * delayed reservation cancelled before its slot comes back whole. The in-process limiter runs
 * it in {@code filter/}, the Valkey limiter the same cases in {@code src-it/}.
 */
public abstract class DelayContract extends ManualClockLimiterTest {

    protected static final long T0 = 1_700_000_040_000L;

    @Override
    protected long startMillis() {
        return T0;
    }

    /** Five units per 10 s: one every 2 s; a full bucket of five; delays up to 4 s. */
    private static Rule rule(Algorithm algorithm) {
        return Rule.builder("delay-" + algorithm.id(), algorithm).limit(5).window(Duration.ofSeconds(10))
                .maxDelay(Duration.ofSeconds(4)).build();
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void pastTheBucketRequestsGetTheSlotsToComeInOrderThenARejection(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        for (int i = 0; i < 5; i++) {
            Decision now = limiter.acquire(rule, "k");
            assertThat(now.allowed()).isTrue();
            assertThat(now.delay()).isZero();
        }
        Decision sixth = limiter.acquire(rule, "k");
        assertThat(sixth.allowed()).isTrue();
        assertThat(sixth.delay()).as("the next unit is 2 s away").isEqualTo(Duration.ofSeconds(2));
        assertThat(sixth.remaining()).isZero();
        Decision peek = limiter.peek(rule, "k", 1);
        assertThat(peek.allowed()).isTrue();
        assertThat(peek.delay()).as("a peek says the slot an acquire would get").isEqualTo(Duration.ofSeconds(4));
        Decision seventh = limiter.acquire(rule, "k");
        assertThat(seventh.delay()).isEqualTo(Duration.ofSeconds(4));

        Decision eighth = limiter.acquire(rule, "k");
        assertThat(eighth.allowed()).as("its slot is 6 s away, past the max delay").isFalse();
        assertThat(eighth.delay()).isZero();
        assertThat(eighth.retryAfter()).as("until its slot is 4 s away").isEqualTo(Duration.ofSeconds(2));

        clock.advance(1_999);
        assertThat(limiter.acquire(rule, "k").allowed()).as("never early").isFalse();
        clock.advance(1);
        Decision late = limiter.acquire(rule, "k");
        assertThat(late.allowed()).isTrue();
        assertThat(late.delay()).isEqualTo(Duration.ofSeconds(4));
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aCostIsDelayedUntilAllItsUnitsAreBack(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        assertThat(limiter.acquire(rule, "k", 4).delay()).isZero();
        Decision two = limiter.acquire(rule, "k", 2);
        assertThat(two.allowed()).isTrue();
        assertThat(two.delay()).isEqualTo(Duration.ofSeconds(2));
        Decision three = limiter.acquire(rule, "k", 3);
        assertThat(three.allowed()).as("its slot is 8 s away").isFalse();
        assertThat(three.retryAfter()).isEqualTo(Duration.ofSeconds(4));
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aDelayedReservationCancelledBeforeItsSlotComesBackWhole(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
        Reservation delayed = limiter.reserve(rule, "k");
        assertThat(delayed.decisions().delay()).isEqualTo(Duration.ofSeconds(2));
        clock.advance(500);
        assertThat(delayed.cancel()).containsExactly(rule.name());
        assertThat(limiter.acquire(rule, "k").delay()).as("as if the cancelled one had never come")
                .isEqualTo(Duration.ofMillis(1_500));
        assertThat(limiter.acquire(rule, "k").delay()).isEqualTo(Duration.ofMillis(3_500));
        assertThat(limiter.acquire(rule, "k").allowed()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aDelayedReservationCancelledAfterItsSlotNeverLeavesTheBucketFullerThanWithoutIt(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
        Reservation delayed = limiter.reserve(rule, "k");
        clock.advance(10_000);
        delayed.cancel();
        // Without the unit the bucket is full again by now; with it, one unit short.
        assertThat(limiter.peek(rule, "k", 1).remaining()).isBetween(4L, 5L);
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
        assertThat(limiter.acquire(rule, "k").delay()).as("never more than the burst")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aHeldRequestSettledAfterItsSlotGivesBackAllButTheRefillSinceItsSlot(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
        Reservation held = limiter.reserve(rule, "k");
        assertThat(held.decisions().delay()).isEqualTo(Duration.ofSeconds(2));
        // It ran at its slot and failed 100 ms later: given back, it loses only the refill
        // since the ms before its slot (101 ms, 505 of its 10,000 ticks), not that of its wait.
        clock.advance(2_100);
        assertThat(held.cancel()).containsExactly(rule.name());
        // Left: the five, refilled 2.1 s (10,500 ticks), plus 505: 40,005 of 50,000 ticks, so
        // the next request is 5 ticks (1 ms) short of its unit; held, without the give-back,
        // it would wait 2,001 ms.
        assertThat(limiter.acquire(rule, "k").delay()).isEqualTo(Duration.ofMillis(1));
        assertThat(limiter.acquire(rule, "k").delay()).isEqualTo(Duration.ofMillis(2_001));
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void onlyTheLastRequestHeldGivesBackSoThatNoLaterOnePassesBesideOnesHeld(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        Reservation now = limiter.reserve(rule, "k");
        for (int i = 0; i < 4; i++) {
            limiter.acquire(rule, "k");
        }
        Reservation first = limiter.reserve(rule, "k");
        Reservation last = limiter.reserve(rule, "k");
        assertThat(first.decisions().delay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(last.decisions().delay()).isEqualTo(Duration.ofSeconds(4));
        clock.advance(100);
        // Giving back the first held, or one that passed, would free a slot before the last
        // one's: a later request would pass beside it, two in 2 s where the bucket allows one.
        assertThat(first.cancel()).as("held before another: its slot passes unused").isEmpty();
        assertThat(now.cancel()).as("taken before the ones held").isEmpty();
        assertThat(last.cancel()).as("the last one held gives back whole").containsExactly(rule.name());
        Decision next = limiter.acquire(rule, "k");
        assertThat(next.delay()).as("the next request gets the last one's slot").isEqualTo(Duration.ofMillis(3_900));
        Decision after = limiter.acquire(rule, "k");
        assertThat(after.allowed()).as("and nothing freed in the middle").isFalse();
        assertThat(after.retryAfter()).isEqualTo(Duration.ofMillis(1_900));
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void heldRequestsTellTheirPlaceInTheQueueAndEachGivesBackWhenGivenBackLastFirstByIt(Algorithm algorithm) {
        Rule rule = Rule.builder("queue-" + algorithm.id(), algorithm).limit(5).window(Duration.ofSeconds(10))
                .maxDelay(Duration.ofSeconds(10)).build();
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
        // Two in one ms, two 300 ms later, and one 3 s after those: a debt smaller than the one
        // before it (refilled meanwhile), yet later in the queue. Neither the time of the take
        // nor the debt alone orders them.
        long[] waits = {0, 0, 300, 0, 3_000};
        List<Reservation> held = new ArrayList<>();
        for (int i = 0; i < waits.length; i++) {
            clock.advance(waits[i]);
            Reservation one = limiter.reserve(rule, "k");
            assertThat(one.decisions().delay()).as("held %d", i).isPositive();
            held.add(one);
        }
        for (int i = 1; i < held.size(); i++) {
            QueuePlace before = Refundable.placeOf(held.get(i - 1));
            QueuePlace place = Refundable.placeOf(held.get(i));
            assertThat(List.of(place.rule(), place.key())).isEqualTo(List.of(before.rule(), before.key()));
            assertThat(place.compareInQueue(before)).as("held %d after %d", i, i - 1).isPositive();
            assertThat(before.compareInQueue(place)).isNegative();
        }
        List<Reservation> byPlace = new ArrayList<>(held);
        Collections.shuffle(byPlace, new Random(7));
        byPlace.sort((a, b) -> Refundable.placeOf(b).compareInQueue(Refundable.placeOf(a)));
        for (Reservation one : byPlace) {
            assertThat(one.cancel()).as("the last held in turn gives back whole").containsExactly(rule.name());
        }
        // Every held unit back (the first held one's slot passed: less the refill since): one
        // unit held back would put the next slot about 2 s away.
        assertThat(limiter.acquire(rule, "k").delay()).isLessThan(Duration.ofSeconds(1));
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aRequestHeldByACallWhoseClockIsBehindTheKeysIsStillTheLastAndGivesBack(Algorithm algorithm) {
        Rule rule = rule(algorithm);
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
        Reservation first = limiter.reserve(rule, "k");
        // Another thread, or instance, whose clock reads 5 ms behind the key's last write: the
        // key keeps its own time, and the take is written at it.
        clock.set(T0 - 5);
        Reservation last = limiter.reserve(rule, "k");
        assertThat(last.decisions().delay()).as("held behind the first").isPositive();
        clock.set(T0 + 100);
        assertThat(last.cancel()).as("the last held gives back whole").containsExactly(rule.name());
        assertThat(first.cancel()).as("then the first is the last").containsExactly(rule.name());
        assertThat(limiter.acquire(rule, "k").delay()).as("the first held one's slot is free again")
                .isEqualTo(Duration.ofMillis(1_900));
    }

    @Test
    void aRuleDelaysOnlyWhereItDecidesTheRequestAloneBesideShadowAndConcurrencyRules() {
        Rule delaying = rule(Algorithm.TOKEN_BUCKET);
        Rule window = Rule.fixedWindow("delay-window", 100, Duration.ofSeconds(10));
        Rule inFlight = Rule.concurrency("delay-in-flight", 10, Duration.ofMinutes(1));
        Rule shadow = Rule.fixedWindow("delay-shadow", 1, Duration.ofSeconds(10)).withShadow(true);
        for (int i = 0; i < 5; i++) {
            limiter.acquire(delaying, "k");
        }
        // With another rule deciding it, the request would pass at one rule's slot while the
        // other counted it at once: their requests would pass bunched. No rule delays then.
        Decisions both = limiter.acquireAll(List.of(Claim.of(delaying, "k"), Claim.of(window, "k")));
        assertThat(both.allowed()).isFalse();
        assertThat(both.retryAfter()).as("until it is allowed now").isEqualTo(Duration.ofSeconds(2));
        assertThat(limiter.peek(window, "k").remaining()).as("the refused request took nothing").isEqualTo(100);

        Decisions held = limiter.acquireAll(List.of(Claim.of(delaying, "k"), Claim.of(inFlight, "k"),
                Claim.of(shadow, "k")));
        assertThat(held.allowed()).isTrue();
        assertThat(held.delay()).as("a permit is held while the request waits; a shadow rule only observes")
                .isEqualTo(Duration.ofSeconds(2));
        assertThat(limiter.acquire(delaying, "k").delay()).isEqualTo(Duration.ofSeconds(4));
    }

    @Test
    void aRuleThatCannotDelayIsRefusedNamingWhy() {
        assertThatThrownBy(() -> Rule.fixedWindow("w", 5, Duration.ofSeconds(10)).withMaxDelay(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rule 'w': max delay PT1S applies only "
                        + "to token-bucket and gcra");
        assertThatThrownBy(() -> Rule.tokenBucket("b", 5, Duration.ofSeconds(10)).withCountRejected(true)
                .withMaxDelay(Duration.ofSeconds(1))).hasMessageContaining("count-rejected");
        assertThatThrownBy(() -> Rule.gcra("g", 5, Duration.ofSeconds(10)).withShadow(true)
                .withMaxDelay(Duration.ofSeconds(1))).hasMessageContaining("shadow");
        assertThatThrownBy(() -> Rule.gcra("g", 5, Duration.ofSeconds(10)).withMaxDelay(Duration.ofMillis(70_001)))
                .hasMessageContaining("max delay PT1M10.001S is too long: at most 70000 ms");
        assertThat(Rule.gcra("g", 5, Duration.ofSeconds(10)).withMaxDelay(Duration.ofMillis(70_000)).maxDelay())
                .isEqualTo(Duration.ofSeconds(70));
    }
}
