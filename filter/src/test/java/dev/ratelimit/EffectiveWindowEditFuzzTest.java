package dev.ratelimit;

import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random walks of one key through rule edits (limit, window, burst changed between calls, as
 * {@code ratelimit.refresh} does), costs, count-rejected rules, requests rejected by another rule
 * (read-only for this one) and peeks, on the in-process limiter: every decision's {@code t} holds
 * {@link RateLimiterContract#assertTheEffectiveWindowHolds its promise}, and a rejection's
 * retry-after never precedes it. It finds a fixed window's {@code t} that ended with a shortened
 * window on an exhausted key (seed 6 of fixed-window, before that was fixed).
 */
class EffectiveWindowEditFuzzTest {

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void everyDecisionsTHoldsThroughEdits(Algorithm algorithm) {
        // Promise 1: within t no more than r, and at t more quota comes.
        for (int seed = 0; seed < 200; seed++) {
            Random random = new Random(seed * 31L + algorithm.ordinal());
            ManualClock clock = new ManualClock(1_700_000_000_000L + random.nextInt(10_000));
            try (LocalRateLimiter limiter = LocalRateLimiter.withClock(clock, 1000)) {
                boolean countRejected = !algorithm.isConcurrency() && random.nextBoolean();
                Rule other = Rule.of("other", Algorithm.SLIDING_LOG, 2, Duration.ofSeconds(3));
                StringBuilder log = new StringBuilder();
                for (int step = 0; step < 40; step++) {
                    long limit = 2 + random.nextInt(6);
                    Duration window = Duration.ofMillis(500L * (1 + random.nextInt(8)));
                    Rule rule = Rule.of("r", algorithm, limit, window).withCountRejected(countRejected);
                    if (algorithm.hasBurst()) {
                        rule = rule.toBuilder().burst(1 + random.nextInt(8)).build();
                    }
                    clock.advance(random.nextInt(4) == 0 ? 0 : random.nextInt(2_000));
                    long cost = 1 + random.nextInt((int) rule.capacity());
                    Decision decision;
                    int kind = random.nextInt(3);
                    if (kind == 0) {
                        decision = limiter.acquire(rule, "k", cost);
                    } else if (kind == 1) {
                        Decisions both = limiter.acquireAll(List.of(Claim.of(rule, "k", cost), Claim.of(other, "k")));
                        decision = both.all().get(0);
                    } else {
                        decision = limiter.peek(rule, "k", cost);
                    }
                    log.append(step).append(' ').append(rule).append(" cost ").append(cost).append(" kind ").append(kind)
                            .append(" -> ").append(decision).append('\n');
                    if (!decision.allowed()) {
                        assertThat(decision.retryAfter()).as(log.toString()).isGreaterThanOrEqualTo(decision.effectiveWindow());
                    }
                    // A peek of a count-rejected rule is the one decision whose t cannot keep both
                    // halves: it writes nothing, while any attempt will (a shortened fixed window's
                    // count then ends with the new window). Its t keeps "no more than r within t",
                    // the half the checker holds every decision to.
                    boolean bothHalves = kind != 2 || !countRejected;
                    if (bothHalves && random.nextInt(3) == 0) {
                        try {
                            RateLimiterContract.assertTheEffectiveWindowHolds(limiter, clock, rule, "k", decision);
                        } catch (AssertionError e) {
                            throw new AssertionError("seed " + seed + "\n" + log + e.getMessage(), e);
                        }
                    }
                }
            }
        }
    }
}
