package dev.ratelimit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every {@link RateLimiter} must answer, with exact numbers, on a clock the test moves by
 * hand. The in-process limiter runs it in {@code filter/}; the Valkey limiter runs the very
 * same cases in {@code src-it/} against a real server, so the two cannot drift apart.
 */
public abstract class RateLimiterContract extends ManualClockLimiterTest {

    /** A time aligned to every window used below (10 s, 1 min), so offsets read as window phases. */
    protected static final long T0 = 1_700_000_040_000L;
    protected static final Duration TEN_SECONDS = Duration.ofSeconds(10);

    @Override
    protected long startMillis() {
        return T0;
    }

    protected static Rule rule(Algorithm algorithm, long limit) {
        return Rule.of("r-" + algorithm.id(), algorithm, limit, TEN_SECONDS);
    }

    /** Takes one unit {@code n} times and returns how many were allowed. */
    protected int allowedOf(Rule rule, String key, int n) {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            if (limiter.acquire(rule, key).allowed()) {
                allowed++;
            }
        }
        return allowed;
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void allowsExactlyTheLimitThenRejects(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        List<Long> remaining = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Decision decision = limiter.acquire(rule, "k");
            assertThat(decision.allowed()).as("request %d", i + 1).isTrue();
            assertThat(decision.retryAfter()).isZero();
            assertThat(decision.limit()).isEqualTo(5);
            assertThat(decision.ruleName()).isEqualTo(rule.name());
            remaining.add(decision.remaining());
        }
        assertThat(remaining).containsExactly(4L, 3L, 2L, 1L, 0L);

        Decision sixth = limiter.acquire(rule, "k");
        assertThat(sixth.allowed()).isFalse();
        assertThat(sixth.remaining()).isZero();
        assertThat(sixth.retryAfter()).isPositive();
    }

    /**
     * The article's boundary test: a full limit just before a window edge (T0 + 9 s), then
     * another just after it (T0 + 10 s). How many of the second burst pass is each model's
     * signature.
     */
    @ParameterizedTest
    @CsvSource({
            "FIXED_WINDOW, 10",           // a new window, a new counter: both bursts pass
            "SLIDING_LOG, 0",             // the first burst is still inside the last 10 s
            "SLIDING_WINDOW_COUNTER, 0",  // 0 + 10 × (10 − 0) / 10 = 10: full
            "TOKEN_BUCKET, 1",            // 1 s at 1 token/s refilled one token
            "GCRA, 1"                     // the same model as the token bucket
    })
    void burstsAcrossAWindowEdge(Algorithm algorithm, int allowedAfterEdge) {
        Rule rule = rule(algorithm, 10);
        clock.set(T0 + 9_000);
        assertThat(allowedOf(rule, "k", 10)).isEqualTo(10);
        clock.set(T0 + 10_000);
        assertThat(allowedOf(rule, "k", 10)).isEqualTo(allowedAfterEdge);
    }

    @Test
    void slidingWindowCounterWeighsThePreviousWindow() {
        Rule rule = rule(Algorithm.SLIDING_WINDOW_COUNTER, 10);
        clock.set(T0 + 9_000);
        assertThat(allowedOf(rule, "k", 10)).isEqualTo(10);
        // Half-way through the next window the previous 10 weigh 5: five more fit.
        clock.set(T0 + 15_000);
        assertThat(allowedOf(rule, "k", 5)).isEqualTo(5);
        Decision rejected = limiter.acquire(rule, "k");
        assertThat(rejected.allowed()).isFalse();
        // 5 + 10 × (10 − e) / 10 + 1 <= 10 once e >= 6 s: one second from now.
        assertThat(rejected.retryAfter()).isEqualTo(Duration.ofMillis(1_000));
        clock.set(T0 + 15_999);
        assertThat(limiter.acquire(rule, "k").allowed()).isFalse();
        clock.set(T0 + 16_000);
        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
    }

    /**
     * Exhaust at T0 + 3 s, then: one millisecond before the announced retry-after still
     * rejected, at it allowed. Also checks each model's retry-after and reset-after values.
     */
    @ParameterizedTest
    @CsvSource({
            // algorithm, retry-after ms, reset-after ms
            "FIXED_WINDOW, 7000, 7000",               // the window ends at T0 + 10 s
            "SLIDING_LOG, 10000, 10000",              // the first entry leaves 10 s after it came
            "SLIDING_WINDOW_COUNTER, 9000, 17000",    // next window, once 5 × (10 − e)/10 <= 4: e = 2 s
            "TOKEN_BUCKET, 2000, 10000",              // 5 per 10 s: one token every 2 s
            "GCRA, 2000, 10000"
    })
    void recoversExactlyAtTheAnnouncedRetryAfter(Algorithm algorithm, long retryMillis, long resetMillis) {
        Rule rule = rule(algorithm, 5);
        clock.set(T0 + 3_000);
        assertThat(allowedOf(rule, "k", 5)).isEqualTo(5);
        Decision rejected = limiter.acquire(rule, "k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfter()).isEqualTo(Duration.ofMillis(retryMillis));
        assertThat(rejected.resetAfter()).isEqualTo(Duration.ofMillis(resetMillis));

        clock.set(T0 + 3_000 + retryMillis - 1);
        assertThat(limiter.acquire(rule, "k").allowed()).as("one ms before retry-after").isFalse();
        clock.set(T0 + 3_000 + retryMillis);
        assertThat(limiter.acquire(rule, "k").allowed()).as("at retry-after").isTrue();
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void fullyRestoredAfterResetAfter(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        clock.set(T0 + 3_000);
        Decision last = null;
        for (int i = 0; i < 5; i++) {
            last = limiter.acquire(rule, "k");
        }
        clock.advance(last.resetAfter().toMillis());
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(5);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void costTakesSeveralUnits(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        Decision first = limiter.acquire(rule, "k", 3);
        assertThat(first.allowed()).isTrue();
        assertThat(first.remaining()).isEqualTo(2);
        Decision second = limiter.acquire(rule, "k", 3);
        assertThat(second.allowed()).isFalse();
        assertThat(second.remaining()).isEqualTo(2);
        assertThat(limiter.acquire(rule, "k", 2).allowed()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void costOutsideOneToCapacityIsRefused(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        assertThatThrownBy(() -> limiter.acquire(rule, "k", 6))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 6");
        assertThatThrownBy(() -> limiter.acquire(rule, "k", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 0");
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void peekTakesNothing(Algorithm algorithm) {
        Rule rule = rule(algorithm, 5);
        limiter.acquire(rule, "k");
        for (int i = 0; i < 3; i++) {
            Decision peek = limiter.peek(rule, "k", 1);
            assertThat(peek.allowed()).isTrue();
            assertThat(peek.remaining()).isEqualTo(4);
        }
        assertThat(limiter.acquire(rule, "k").remaining()).isEqualTo(3);
        assertThat(limiter.peek(rule, "k", 4).allowed()).isFalse();
        assertThat(limiter.peek(rule, "k", 4).retryAfter()).isPositive();
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void resetRestoresTheQuota(Algorithm algorithm) {
        Rule rule = rule(algorithm, 3);
        assertThat(allowedOf(rule, "k", 4)).isEqualTo(3);
        limiter.reset(rule, "k");
        Decision decision = limiter.acquire(rule, "k");
        assertThat(decision.allowed()).isTrue();
        assertThat(decision.remaining()).isEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void keysAndRulesAreIndependent(Algorithm algorithm) {
        Rule rule = rule(algorithm, 2);
        Rule other = Rule.of("other", algorithm, 2, TEN_SECONDS);
        assertThat(allowedOf(rule, "a", 3)).isEqualTo(2);
        assertThat(allowedOf(rule, "b", 3)).isEqualTo(2);
        assertThat(allowedOf(other, "a", 3)).isEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void severalRulesAreAllOrNothing(Algorithm algorithm) {
        Rule wide = Rule.of("wide", algorithm, 5, TEN_SECONDS);
        Rule narrow = Rule.of("narrow", Algorithm.SLIDING_LOG, 2, TEN_SECONDS);
        List<Claim> both = List.of(Claim.of(wide, "ip:1"), Claim.of(narrow, "user:1"));

        assertThat(limiter.acquireAll(both).allowed()).isTrue();
        assertThat(limiter.acquireAll(both).allowed()).isTrue();
        Decisions third = limiter.acquireAll(both);
        assertThat(third.allowed()).isFalse();
        assertThat(third.all()).extracting(Decision::allowed).containsExactly(true, false);
        assertThat(third.retryAfter()).isEqualTo(third.all().get(1).retryAfter());

        // The rejected request took nothing from the rule that allowed it.
        assertThat(limiter.peek(wide, "ip:1", 1).remaining()).isEqualTo(3);
        assertThat(limiter.acquire(wide, "ip:1").remaining()).isEqualTo(2);
    }

    @Test
    void severalRulesWithCountRejectedRecordTheAttempt() {
        Rule counting = Rule.of("counting", Algorithm.FIXED_WINDOW, 5, TEN_SECONDS).withCountRejected(true);
        Rule narrow = Rule.of("narrow", Algorithm.FIXED_WINDOW, 1, TEN_SECONDS);
        List<Claim> both = List.of(Claim.of(counting, "k"), Claim.of(narrow, "k"));
        assertThat(limiter.acquireAll(both).allowed()).isTrue();
        assertThat(limiter.acquireAll(both).allowed()).isFalse();
        assertThat(limiter.peek(counting, "k", 1).remaining()).isEqualTo(3);
        assertThat(limiter.peek(narrow, "k", 1).remaining()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aShadowRuleCountsButNeverRejectsNorBlocksOthers(Algorithm algorithm) {
        Rule enforcing = Rule.of("enforcing", algorithm, 5, TEN_SECONDS);
        Rule shadow = Rule.of("shadow", Algorithm.FIXED_WINDOW, 1, TEN_SECONDS).withShadow(true);
        List<Claim> both = List.of(Claim.of(enforcing, "k"), Claim.of(shadow, "k"));
        assertThat(limiter.acquireAll(both).allowed()).isTrue();
        Decisions second = limiter.acquireAll(both);
        assertThat(second.allowed()).isTrue();
        assertThat(second.retryAfter()).isZero();
        assertThat(second.all().get(1).allowed()).as("what the shadow rule would have said").isFalse();
        assertThat(second.all().get(0).remaining()).as("the enforcing rule consumed").isEqualTo(3);
        assertThat(limiter.acquire(shadow, "k").allowed()).isFalse();
    }

    @Test
    void eachClaimTakesItsOwnCost() {
        Rule a = Rule.of("a", Algorithm.TOKEN_BUCKET, 10, TEN_SECONDS);
        Rule b = Rule.of("b", Algorithm.SLIDING_LOG, 10, TEN_SECONDS);
        Decisions decisions = limiter.acquireAll(List.of(Claim.of(a, "k", 4), Claim.of(b, "k", 7)));
        assertThat(decisions.all()).extracting(Decision::remaining).containsExactly(6L, 3L);
    }

    @Test
    void severalRulesRefuseTheSameRuleTwice() {
        Rule rule = rule(Algorithm.GCRA, 5);
        assertThatThrownBy(() -> limiter.acquireAll(List.of(Claim.of(rule, "a"), Claim.of(rule, "b"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("given twice");
    }

    /**
     * A client exhausts its limit of 5 per 10 s at T0 + 1 s and hammers 5 more requests at
     * T0 + 6 s. With count-rejected the rejections keep it out longer; without, they cost it
     * nothing. The last column is when one request passes again.
     */
    @ParameterizedTest
    @CsvSource({
            // algorithm, count-rejected, passed while hammering, passes again at T0 + ms
            "SLIDING_LOG, false, 0, 11000",   // the first five entries leave
            "SLIDING_LOG, true, 0, 16000",    // the five rejected ones, recorded at T0 + 6 s, must leave too
            "TOKEN_BUCKET, false, 2, 7000",   // 2.5 tokens came back by T0 + 6 s, 2 taken; 0.5 more needs 1 s
            "TOKEN_BUCKET, true, 2, 13000",   // 3 rejections overdrew 0.5 to -2.5: 3.5 tokens need 7 s
            "GCRA, false, 2, 7000",
            "GCRA, true, 2, 13000"
    })
    void countRejectedKeepsAHammeringClientOut(Algorithm algorithm, boolean countRejected, int passedWhileHammering,
                                               long passesAt) {
        Rule rule = rule(algorithm, 5).withCountRejected(countRejected);
        clock.set(T0 + 1_000);
        assertThat(allowedOf(rule, "k", 5)).isEqualTo(5);
        clock.set(T0 + 6_000);
        assertThat(allowedOf(rule, "k", 5)).isEqualTo(passedWhileHammering);
        assertThat(limiter.peek(rule, "k", 1).retryAfter()).isEqualTo(Duration.ofMillis(passesAt - 6_000));

        clock.set(T0 + passesAt - 1);
        assertThat(limiter.peek(rule, "k", 1).allowed()).as("one ms before").isFalse();
        clock.set(T0 + passesAt);
        assertThat(limiter.acquire(rule, "k").allowed()).as("at the time announced").isTrue();
    }

    @Test
    void burstAllowsMoreAtOnceThanTheRate() {
        Rule rule = Rule.tokenBucket("burst", 1, Duration.ofSeconds(1), 3);
        assertThat(allowedOf(rule, "k", 4)).isEqualTo(3);
        clock.advance(1_000);
        assertThat(allowedOf(rule, "k", 2)).isEqualTo(1);
        Rule gcra = Rule.gcra("gcra-burst", 1, Duration.ofSeconds(1), 3);
        assertThat(allowedOf(gcra, "k", 4)).isEqualTo(3);
        clock.advance(1_000);
        assertThat(allowedOf(gcra, "k", 2)).isEqualTo(1);
    }

    /**
     * The review's case: a rejection that charges a count-rejected rule must announce the time
     * that rule needs too, not only the time of the rule that rejected.
     */
    @Test
    void retryAfterCoversTheRulesTheRejectionCharged() {
        Rule burst = Rule.of("burst", Algorithm.FIXED_WINDOW, 1, TEN_SECONDS);
        Rule lockout = Rule.of("lockout", Algorithm.SLIDING_LOG, 2, Duration.ofHours(1)).withCountRejected(true);
        List<Claim> both = List.of(Claim.of(burst, "k"), Claim.of(lockout, "k"));
        assertThat(limiter.acquireAll(both).allowed()).isTrue();
        clock.advance(1_000);
        Decisions rejected = limiter.acquireAll(both);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.all().get(0).retryAfter()).isEqualTo(Duration.ofSeconds(9));
        // The rejection filled the lockout: its first entry leaves the hour at T0 + 1 h.
        assertThat(rejected.retryAfter()).isEqualTo(Duration.ofHours(1).minusSeconds(1));
        long retryAt = clock.getAsLong() + rejected.retryAfter().toMillis();
        clock.set(retryAt - 1);
        assertThat(limiter.peek(lockout, "k", 1).allowed()).as("1 ms before the retry-after").isFalse();
        clock.set(retryAt);
        assertThat(limiter.acquireAll(both).allowed()).as("at the retry-after").isTrue();
    }

    /** A count-rejected rule the rejection charged, on every algorithm that has it: never an early retry. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
    void aRetryAfterIsNeverEarlyWhenTheRejectionCharged(Algorithm algorithm) {
        Rule narrow = Rule.of("narrow", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1));
        Rule counting = Rule.of("counting", algorithm, 2, Duration.ofMinutes(1)).withCountRejected(true);
        List<Claim> both = List.of(Claim.of(narrow, "k"), Claim.of(counting, "k"));
        assertThat(limiter.acquireAll(both).allowed()).isTrue();
        clock.advance(100);
        Decisions rejected = limiter.acquireAll(both);
        assertThat(rejected.allowed()).isFalse();
        long retryAt = clock.getAsLong() + rejected.retryAfter().toMillis();
        clock.set(retryAt - 1);
        assertThat(limiter.peek(narrow, "k", 1).allowed() && limiter.peek(counting, "k", 1).allowed())
                .as("both allow 1 ms before the retry-after of %s", rejected).isFalse();
        clock.set(retryAt);
        assertThat(limiter.acquireAll(both).allowed()).as("at the retry-after of %s", rejected).isTrue();
    }

    /**
     * The effective window (draft-11's {@code t}) is the time until more quota comes: 2 units
     * at T0 + 1 s and 3 at T0 + 4 s, then one millisecond before it a request of one unit more
     * than remaining is still refused, at it allowed.
     */
    @ParameterizedTest
    @CsvSource({
            // algorithm, remaining, effective window ms
            "FIXED_WINDOW, 0, 6000",            // the window ends at T0 + 10 s
            "SLIDING_LOG, 0, 7000",             // the entries of T0 + 1 s leave at T0 + 11 s
            "SLIDING_WINDOW_COUNTER, 0, 8000",  // next window, once 5 × (10 − e)/10 <= 4: e = 2 s
            "TOKEN_BUCKET, 1, 1000",            // debt 3.5 units at 0.5 per s: the 2nd unit in 1 s
            "GCRA, 1, 1000",
            "CONCURRENCY, 0, 7000"              // the leases of T0 + 1 s time out at T0 + 11 s
    })
    void effectiveWindowIsTheTimeUntilMoreQuotaComes(Algorithm algorithm, long remaining, long windowMillis) {
        Rule rule = rule(algorithm, 5);
        clock.set(T0 + 1_000);
        assertThat(limiter.acquire(rule, "k", 2).allowed()).isTrue();
        clock.set(T0 + 4_000);
        Decision decision = limiter.acquire(rule, "k", 3);
        assertThat(decision.allowed()).isTrue();
        assertThat(decision.remaining()).isEqualTo(remaining);
        assertThat(decision.effectiveWindow()).isEqualTo(Duration.ofMillis(windowMillis));
        assertMoreQuotaComesExactlyAtTheEffectiveWindow(rule, "k", decision);
    }

    /**
     * With the quota full no more can come: the effective window is the time the rule restores
     * its whole quota (a fixed window's end; none for a concurrency rule).
     */
    @ParameterizedTest
    @CsvSource({
            "FIXED_WINDOW, 7000",
            "SLIDING_LOG, 10000",
            "SLIDING_WINDOW_COUNTER, 10000",
            "TOKEN_BUCKET, 10000",
            "GCRA, 10000",
            "CONCURRENCY, 0"
    })
    void aFullQuotaHasTheRulesOwnWindow(Algorithm algorithm, long windowMillis) {
        clock.set(T0 + 3_000);
        Decision full = limiter.peek(rule(algorithm, 5), "k", 1);
        assertThat(full.remaining()).isEqualTo(5);
        assertThat(full.effectiveWindow()).isEqualTo(Duration.ofMillis(windowMillis));
    }

    /** A bucket whose burst is not its limit restores the whole burst in burst × window / limit. */
    @Test
    void aFullBucketsWindowIsThatOfItsBurst() {
        Rule rule = Rule.tokenBucket("burst", 5, TEN_SECONDS, 8);
        assertThat(limiter.peek(rule, "k", 1).effectiveWindow()).isEqualTo(Duration.ofSeconds(16));
    }

    /**
     * Random costs, clock moves and count-rejected rules on every algorithm: every decision's
     * effective window holds its promise ({@link #assertTheEffectiveWindowHolds}), and a
     * rejection's retry-after never precedes it.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void everyDecisionsEffectiveWindowHolds(Algorithm algorithm) {
        java.util.Random random = new java.util.Random(algorithm.ordinal() * 7L + 1);
        Rule rule = Rule.of("t-" + algorithm.id(), algorithm, 5, TEN_SECONDS)
                .withCountRejected(!algorithm.isConcurrency() && random.nextBoolean());
        if (algorithm.hasBurst()) {
            rule = rule.toBuilder().burst(3 + random.nextInt(5)).build();
        }
        for (int step = 0; step < 60; step++) {
            clock.advance(random.nextInt(4) == 0 ? 0 : random.nextInt(3_000));
            Decision decision = limiter.acquire(rule, "k", 1 + random.nextInt((int) rule.capacity()));
            if (!decision.allowed()) {
                assertThat(decision.retryAfter()).as("step %d: %s", step, decision)
                        .isGreaterThanOrEqualTo(decision.effectiveWindow());
            }
            if (random.nextBoolean()) {
                assertTheEffectiveWindowHolds(limiter, clock, rule, "k", decision);
            }
        }
    }

    /**
     * One more unit than remaining is refused 1 ms before the effective window ends and fits at
     * its end, with nothing taken meanwhile.
     */
    private void assertMoreQuotaComesExactlyAtTheEffectiveWindow(Rule rule, String key, Decision decision) {
        long more = decision.remaining() + 1;
        if (more > rule.capacity()) {
            return; // the quota is full: no more can come
        }
        long now = clock.getAsLong();
        long end = now + decision.effectiveWindow().toMillis();
        assertThat(decision.effectiveWindow()).as("%s", decision).isPositive();
        clock.set(end - 1);
        assertThat(limiter.peek(rule, key, more).allowed()).as("%d units 1 ms before the end of %s", more, decision)
                .isFalse();
        clock.set(end);
        assertThat(limiter.peek(rule, key, more).allowed()).as("%d units at the end of %s", more, decision).isTrue();
        clock.set(now);
    }

    /**
     * The promise of an effective window {@code t} (draft-11 §4.1, §7: a client does not use
     * more than {@code r} units within {@code t}), against the two clients at its edges: one that
     * takes nothing, and one that takes its {@code r} units at once (the most it can have before
     * more comes; units taken now may also move when more comes: a sliding window counter's weigh
     * less once their window ends, new leases of a shorter timeout go sooner). Neither gets more
     * than {@code r} before {@code t} ends, and at its end one of them gets more: {@code t} is
     * when additional quota is first made available. The clock is left at the end, with the
     * second client's units taken.
     *
     * @param limiter  the limiter
     * @param clock    its clock
     * @param rule     the rule that decided
     * @param key      the key
     * @param decision the decision to test
     */
    static void assertTheEffectiveWindowHolds(RateLimiter limiter, ManualClock clock, Rule rule, String key,
                                              Decision decision) {
        long remaining = decision.remaining();
        if (remaining >= rule.capacity()) {
            return; // the quota is full: no more can come, and t is the rule's window by convention
        }
        long now = clock.getAsLong();
        long end = now + decision.effectiveWindow().toMillis();
        assertThat(decision.effectiveWindow()).as("%s", decision).isPositive();

        clock.set(end - 1);
        assertThat(limiter.peek(rule, key, remaining + 1).allowed())
                .as("%d units 1 ms before the end of %s", remaining + 1, decision).isFalse();
        clock.set(end);
        boolean idleGetsMore = limiter.peek(rule, key, remaining + 1).allowed();

        clock.set(now);
        if (remaining > 0) {
            assertThat(limiter.acquire(rule, key, remaining).allowed()).as("the remaining of %s", decision).isTrue();
        }
        clock.set(end - 1);
        assertThat(limiter.peek(rule, key, 1).allowed())
                .as("one more 1 ms before the end of %s, the remaining taken at once", decision).isFalse();
        clock.set(end);
        boolean eagerGetsMore = limiter.peek(rule, key, 1).allowed();
        assertThat(idleGetsMore || eagerGetsMore).as("more quota at the end of %s", decision).isTrue();
    }
}
