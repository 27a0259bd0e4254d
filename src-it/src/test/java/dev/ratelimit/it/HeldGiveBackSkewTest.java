package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Give-backs of held requests from client clocks behind the key's time, on Valkey and in process:
 * the last held gives back whole, one in the middle of the queue nothing. One manual clock stands
 * for several instances or threads whose clocks disagree (the limiter sends the clock
 * reading of each call, as the contract test aRequestHeldByACallWhoseClockIsBehindTheKeys... does).
 */
@ExtendWith(ValkeyExtension.class)
class HeldGiveBackSkewTest {

    private static final long T0 = 1_700_000_040_000L;

    private final ValkeyServer valkey;

    HeldGiveBackSkewTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    private RateLimiter limiter(String which, ManualClock clock) {
        return "valkey".equals(which) ? ClientClockLimiters.fresh(valkey, clock) : LocalRateLimiter.withClock(clock, 1000);
    }

    /** Takes the bucket's five units of key k: the next take is held. */
    private static void emptyTheBucket(RateLimiter limiter, Rule rule) {
        for (int i = 0; i < 5; i++) {
            limiter.acquire(rule, "k");
        }
    }

    /** 100 per s (one unit per 10 ms, 100 ticks/ms, 1000 ticks a unit), a bucket of 5, held up to 300 ms. */
    private static Rule fast(Algorithm algorithm) {
        return Rule.builder("fast-" + algorithm.id(), algorithm).limit(100).window(Duration.ofSeconds(1)).burst(5)
                .maxDelay(Duration.ofMillis(300)).build();
    }

    /** As DelayContract's: 5 per 10 s, one unit every 2 s, held up to 4 s. */
    private static Rule slow(Algorithm algorithm) {
        return Rule.builder("slow-" + algorithm.id(), algorithm).limit(5).window(Duration.ofSeconds(10))
                .maxDelay(Duration.ofSeconds(4)).build();
    }

    /**
     * Instance X's clock reads 15 ms ahead of instance Y's. Y's held take A is written at X's
     * (the key's) time; X holds B one unit-time (10 ms) later, so B's take leaves the same debt A's
     * did. Y then gives A back (it ran at its slot and failed, or gave up at its slot) while B is
     * still held: A is in the middle of the queue and must give back nothing.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"valkey,TOKEN_BUCKET", "valkey,GCRA", "local,TOKEN_BUCKET", "local,GCRA"})
    void aHeldRequestInTheMiddleGivesBackFromAClockBehind(String which, Algorithm algorithm) {
        ManualClock clock = new ManualClock(T0);
        Rule rule = fast(algorithm);
        try (RateLimiter limiter = limiter(which, clock)) {
            clock.set(T0 + 15); // X
            for (int i = 0; i < 5; i++) {
                assertThat(limiter.acquire(rule, "k").delay()).isZero();
            }
            clock.set(T0); // Y, 15 ms behind
            Reservation a = limiter.reserve(rule, "k");
            assertThat(a.decisions().delay()).isEqualTo(Duration.ofMillis(10));
            clock.set(T0 + 25); // X: A's slot (Y's T0 + 10)
            Reservation b = limiter.reserve(rule, "k");
            assertThat(b.decisions().delay()).as("B held behind A").isEqualTo(Duration.ofMillis(10));
            clock.set(T0 + 12); // Y, 2 ms after A's slot by its own clock
            List<String> fromA = a.cancel();
            clock.set(T0 + 27); // X
            Decision c = limiter.acquire(rule, "k");
            // 5 at T0+15, A at T0+25 (ran), B at T0+35: without the give-back C is held to T0+45 (18 ms).
            assertThat(fromA).as("A is held before B: nothing from the middle").isEmpty();
            assertThat(c.delay()).as("C's slot, A counted").isEqualTo(Duration.ofMillis(18));
        }
    }

    /**
     * Two held, both from one clock. B, the last, gives back from a thread whose clock reads 50 ms;
     * then A, now the last held, from a thread whose clock reads 20 ms (it read the clock earlier,
     * or another instance 30 ms behind): it must give back all of its units.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"valkey,TOKEN_BUCKET", "valkey,GCRA", "local,TOKEN_BUCKET", "local,GCRA"})
    void theLastHeldAfterALaterGiveBackFromAClockBehind(String which, Algorithm algorithm) {
        ManualClock clock = new ManualClock(T0);
        Rule rule = slow(algorithm);
        try (RateLimiter limiter = limiter(which, clock)) {
            emptyTheBucket(limiter, rule);
            Reservation a = limiter.reserve(rule, "k");
            Reservation b = limiter.reserve(rule, "k");
            assertThat(b.decisions().delay()).isEqualTo(Duration.ofSeconds(4));
            clock.set(T0 + 50);
            List<String> fromB = b.cancel();
            clock.set(T0 + 20);
            List<String> fromA = a.cancel();
            clock.set(T0 + 100);
            Decision next = limiter.acquire(rule, "k");
            assertThat(fromB).containsExactly(rule.name());
            assertThat(fromA).as("A is the last held now: all of it back").containsExactly(rule.name());
            assertThat(next.delay()).isEqualTo(Duration.ofMillis(1_900));
        }
    }

    /**
     * The new path itself: A held from a clock 5 ms behind the key, B held after it from the key's
     * clock; B given back at +100, then A from its own (behind) clock at +60: A is the last.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"valkey,TOKEN_BUCKET", "valkey,GCRA", "local,TOKEN_BUCKET", "local,GCRA"})
    void heldFromABehindClockThenLastAfterALaterGiveBack(String which, Algorithm algorithm) {
        ManualClock clock = new ManualClock(T0);
        Rule rule = slow(algorithm);
        try (RateLimiter limiter = limiter(which, clock)) {
            emptyTheBucket(limiter, rule);
            clock.set(T0 - 5);
            Reservation a = limiter.reserve(rule, "k");
            clock.set(T0);
            Reservation b = limiter.reserve(rule, "k");
            clock.set(T0 + 100);
            List<String> fromB = b.cancel();
            clock.set(T0 + 60);
            List<String> fromA = a.cancel();
            clock.set(T0 + 100);
            Decision next = limiter.acquire(rule, "k");
            assertThat(fromB).containsExactly(rule.name());
            assertThat(fromA).as("A is the last held now: all of it back").containsExactly(rule.name());
            assertThat(next.delay()).isEqualTo(Duration.ofMillis(1_900));
        }
    }

    /**
     * One instance, one clock, no skew: 1000 per s (one unit per ms), a bucket of 5. A is held at
     * t, B at t+1 (leaving the same debt A did). A's give-back read the clock at t (a thread
     * stalled 1 ms between reading the clock and sending) and lands after B's take: A is in the
     * middle and must give nothing.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"valkey,TOKEN_BUCKET", "valkey,GCRA", "local,TOKEN_BUCKET", "local,GCRA"})
    void aStalledGiveBackFromTheMiddleOnOneClock(String which, Algorithm algorithm) {
        ManualClock clock = new ManualClock(T0);
        Rule rule = Rule.builder("ms-" + algorithm.id(), algorithm).limit(1000).window(Duration.ofSeconds(1)).burst(5)
                .maxDelay(Duration.ofMillis(30)).build();
        try (RateLimiter limiter = limiter(which, clock)) {
            emptyTheBucket(limiter, rule);
            Reservation a = limiter.reserve(rule, "k");
            assertThat(a.decisions().delay()).isEqualTo(Duration.ofMillis(1));
            clock.set(T0 + 1);
            Reservation b = limiter.reserve(rule, "k");
            assertThat(b.decisions().delay()).isEqualTo(Duration.ofMillis(1));
            clock.set(T0);
            List<String> fromA = a.cancel();
            clock.set(T0 + 1);
            Decision c = limiter.acquire(rule, "k");
            assertThat(fromA).as("A is held before B: nothing from the middle").isEmpty();
            assertThat(c.delay()).isEqualTo(Duration.ofMillis(2));
        }
    }

    /**
     * X (key's clock) drains at T0; Y, 5 ms behind, holds A (slot T0+2000 on X's clock, told
     * 2 s); A runs and fails; Y gives it back at its T0+2095 (X's T0+2100). Prints what the next
     * request from X at T0+2100 gets: on one clock (DelayContract) it is held 1 ms.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"valkey,TOKEN_BUCKET", "valkey,GCRA", "local,TOKEN_BUCKET", "local,GCRA"})
    void afterItsSlotFromTheBehindClockThatHeldIt(String which, Algorithm algorithm) {
        ManualClock clock = new ManualClock(T0);
        Rule rule = slow(algorithm);
        try (RateLimiter limiter = limiter(which, clock)) {
            emptyTheBucket(limiter, rule);
            clock.set(T0 - 5);
            Reservation a = limiter.reserve(rule, "k");
            clock.set(T0 + 2_095);
            List<String> fromA = a.cancel();
            clock.set(T0 + 2_100);
            Decision next = limiter.acquire(rule, "k");
            Decision after = limiter.acquire(rule, "k");
        }
    }

    /** A held from a behind clock, then a reset (or an edit) and new takes: A gives nothing. */
    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({"valkey,TOKEN_BUCKET,reset", "valkey,GCRA,reset", "local,TOKEN_BUCKET,reset", "local,GCRA,reset",
            "valkey,TOKEN_BUCKET,edit", "valkey,GCRA,edit", "local,TOKEN_BUCKET,edit", "local,GCRA,edit"})
    void heldFromABehindClockThenResetOrEdit(String which, Algorithm algorithm, String how) {
        ManualClock clock = new ManualClock(T0);
        Rule rule = slow(algorithm);
        try (RateLimiter limiter = limiter(which, clock)) {
            emptyTheBucket(limiter, rule);
            clock.set(T0 - 5);
            Reservation a = limiter.reserve(rule, "k");
            clock.set(T0 + 10);
            Rule now = rule;
            if (how.equals("reset")) {
                limiter.reset(rule, "k");
            } else {
                now = Rule.builder(rule.name(), algorithm).limit(6).window(Duration.ofSeconds(10)).burst(5)
                        .maxDelay(Duration.ofSeconds(4)).build();
            }
            for (int i = 0; i < 6; i++) {
                limiter.acquire(now, "k");
            }
            Decision before = limiter.peek(now, "k", 1);
            clock.set(T0 + 5);
            List<String> fromA = a.cancel();
            clock.set(T0 + 10);
            Decision afterward = limiter.peek(now, "k", 1);
            assertThat(fromA).isEmpty();
            assertThat(afterward).isEqualTo(before);
        }
    }
}
