package dev.ratelimit.it;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cost known after the work ({@link Reservation#commit(long)}) on a real Valkey: the
 * difference from the reservation given back or charged, exactly; the key in debt refused until
 * refill or the window pays it, per algorithm, at window edges; the debt's bound; totals exact
 * under 8 threads on 2 instances; a charge the store cannot take goes by the rule's policy.
 */
@ExtendWith(ValkeyExtension.class)
class CostAfterWorkTest {

    private static final long T0 = 1_800_000_000_000L; // on a 10 s boundary
    private final ValkeyServer valkey;

    CostAfterWorkTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void running() {
        valkey.start();
        valkey.flushAll();
    }

    @Test
    void theDifferenceIsGivenBackOrChargedExactly() {
        ManualClock clock = new ManualClock(T0);
        Rule rule = Rule.fixedWindow("work", 100, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = ClientClockLimiters.unflushed(valkey, clock)) {
            Reservation more = limiter.reserve(rule, "k", 10);
            assertThat(more.decisions().get(0).remaining()).isEqualTo(90); // before its cost is known
            assertThat(more.commit(25)).isTrue();
            assertThat(more.commit(50)).as("settled once").isFalse();
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(75);
            limiter.reserve(rule, "k", 10).commit(3);
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(72);
            limiter.reserve(rule, "k", 10).commit(10);
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(62);
            limiter.reserve(rule, "k", 10).commit(0);
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(62);
            Reservation cancelled = limiter.reserve(rule, "k", 10);
            cancelled.cancel();
            assertThat(cancelled.commit(40)).as("a cancelled reservation is settled").isFalse();
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(62);
        }
    }

    /** A fixed window: the charge counts in the window of its own time, and its debt ends with it. */
    @Test
    void aFixedWindowsDebtEndsWithTheWindowItWasChargedIn() {
        ManualClock clock = new ManualClock(T0);
        Rule rule = Rule.fixedWindow("fw", 10, Duration.ofSeconds(10));
        try (ValkeyRateLimiter limiter = ClientClockLimiters.unflushed(valkey, clock)) {
            Reservation r = limiter.reserve(rule, "k", 5);       // window [T0, T0+10s)
            clock.set(T0 + 12_000);                              // the next window
            r.commit(30);                                        // 25 more, charged now
            Decision refused = limiter.acquire(rule, "k");
            assertThat(refused.allowed()).isFalse();
            assertThat(refused.retryAfter()).isEqualTo(Duration.ofSeconds(8));
            clock.set(T0 + 19_999);
            assertThat(limiter.acquire(rule, "k").allowed()).isFalse();
            clock.set(T0 + 20_000);
            assertThat(limiter.peek(rule, "k").remaining()).as("a new window: the debt is over").isEqualTo(10);
        }
    }

    /** Buckets: the debt is paid by refill, unit by unit. */
    @Test
    void aBucketsDebtIsPaidByRefill() {
        for (Rule rule : List.of(Rule.tokenBucket("tb", 10, Duration.ofSeconds(10), 10),
                Rule.gcra("gcra", 10, Duration.ofSeconds(10), 10))) {
            ManualClock clock = new ManualClock(T0);
            try (ValkeyRateLimiter limiter = ClientClockLimiters.unflushed(valkey, clock)) {
                limiter.reserve(rule, "k", 1).commit(25); // 15 units beyond an empty bucket
                assertThat(limiter.peek(rule, "k").allowed()).as(rule.name()).isFalse();
                clock.set(T0 + 15_999);
                assertThat(limiter.peek(rule, "k").allowed()).as(rule.name()).isFalse();
                clock.set(T0 + 16_000);
                assertThat(limiter.peek(rule, "k").remaining()).as(rule.name()).isEqualTo(1);
                clock.set(T0 + 25_000);
                assertThat(limiter.peek(rule, "k").remaining()).as(rule.name()).isEqualTo(10);
            }
        }
    }

    /** A sliding window counter: the charge weighs on its window and, fading, on the next. */
    @Test
    void aSlidingWindowCountersDebtFadesOverTheNextWindow() {
        ManualClock clock = new ManualClock(T0);
        Rule rule = Rule.slidingWindowCounter("swc", 10, Duration.ofSeconds(10));
        try (ValkeyRateLimiter limiter = ClientClockLimiters.unflushed(valkey, clock)) {
            limiter.reserve(rule, "k", 1).commit(25);
            clock.set(T0 + 5_000);
            assertThat(limiter.peek(rule, "k").allowed()).isFalse();
            clock.set(T0 + 16_000); // 25 x 4/10 = 10 weigh: nothing left
            assertThat(limiter.peek(rule, "k").allowed()).isFalse();
            clock.set(T0 + 17_000); // 25 x 3/10 = 7.5
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(2);
            clock.set(T0 + 20_000);
            assertThat(limiter.peek(rule, "k").remaining()).isEqualTo(10);
        }
    }

    /** At most eight quotas of debt: more is dropped, and the resilient limiter reports it. */
    @Test
    void theDebtIsBoundedAndWhatPassesIsReported() {
        Rule rule = Rule.fixedWindow("bound", 10, Duration.ofHours(1));
        List<String> events = new ArrayList<>();
        RateLimitListener listener = recording(events);
        try (ValkeyRateLimiter valkeyLimiter = limiter();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(valkeyLimiter).listener(listener).build()) {
            limiter.reserve(rule, "k", 1).commit(70); // 79 units beyond: fits in 8 x 10
            limiter.reserve(rule, "other", 1).commit(1000);
            synchronized (events) {
                assertThat(events).contains("bound:CHARGED", "bound:CHARGE_DROPPED");
                assertThat(events.stream().filter(e -> e.endsWith("CHARGE_DROPPED")).count()).isEqualTo(1);
            }
            // Paying back from 80 counted needs the window's end: nothing admitted before.
            assertThat(valkeyLimiter.peek(rule, "other").allowed()).isFalse();
            assertThat(valkeyLimiter.peek(rule, "other").retryAfter()).isPositive();
        }
    }

    /**
     * One key under two quotas of one rule (two plans, or a request admitted before an edit): a
     * small charge by the smaller one never lowers the debt the larger one's charge left.
     */
    @Test
    void aSmallerQuotasChargeNeverLowersTheDebt() {
        // A client clock one hour into a day: a fixed window of a day then owes until 23 hours on,
        // whatever the time of day the test runs (at 23:14 the day's window ended 46 min on).
        long oneHourIntoADay = Instant.parse("2026-01-01T01:00:00Z").toEpochMilli();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(() -> oneHourIntoADay).build()) {
            for (String algorithm : List.of("fixed-window", "sliding-window-counter", "token-bucket", "gcra")) {
                Rule small = quota(algorithm, 1_000);
                Rule big = quota(algorithm, 10_000);
                String key = "tenant-" + algorithm;
                Reservation bySmall = limiter.reserve(small, key, 500);
                limiter.reserve(big, key, 500).commit(80_000);
                Duration owed = limiter.peek(big, key, 1).retryAfter();
                assertThat(owed).as(algorithm).isGreaterThan(Duration.ofHours(1));
                bySmall.commit(600);
                Decision after = limiter.peek(big, key, 1);
                assertThat(after.allowed()).as(algorithm).isFalse();
                assertThat(after.retryAfter()).as(algorithm).isGreaterThanOrEqualTo(owed.minusSeconds(5));
            }
        }
    }

    private static Rule quota(String algorithm, long limit) {
        return switch (algorithm) {
            case "fixed-window" -> Rule.fixedWindow("tokens", limit, Duration.ofDays(1));
            case "sliding-window-counter" -> Rule.slidingWindowCounter("tokens", limit, Duration.ofDays(1));
            case "token-bucket" -> Rule.tokenBucket("tokens", limit, Duration.ofDays(1), limit);
            default -> Rule.gcra("tokens", limit, Duration.ofDays(1), limit);
        };
    }

    /** A sliding log gets back what its cost left unused, never more; a concurrency permit is released. */
    @Test
    void aSlidingLogIsNeverChargedAndAPermitIsReleased() {
        Rule log = Rule.slidingLog("log", 10, Duration.ofHours(1));
        Rule permits = Rule.concurrency("jobs", 1, Duration.ofMinutes(1));
        try (ValkeyRateLimiter limiter = limiter()) {
            limiter.reserve(log, "k", 5).commit(20);
            assertThat(limiter.peek(log, "k").remaining()).isEqualTo(5);
            limiter.reserve(log, "k", 4).commit(1);
            assertThat(limiter.peek(log, "k").remaining()).isEqualTo(4);
            Reservation job = limiter.reserve(permits, "k");
            assertThat(limiter.peek(permits, "k").allowed()).isFalse();
            job.commit(7);
            assertThat(limiter.peek(permits, "k").allowed()).isTrue();
        }
    }

    /** 8 threads on 2 instances: what was charged in all is what the work reported, no more, no less. */
    @Test
    void totalsAreExactUnderContention() throws Exception {
        Rule rule = Rule.fixedWindow("total", 1_000_000, Duration.ofHours(1));
        Rule tight = Rule.fixedWindow("tight", 200, Duration.ofHours(1));
        AtomicLong reported = new AtomicLong();
        AtomicLong reportedTight = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (ValkeyRateLimiter a = limiter(); ValkeyRateLimiter b = limiter()) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                ValkeyRateLimiter limiter = t % 2 == 0 ? a : b;
                Random random = new Random(t);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 40; i++) {
                        long estimate = 1 + random.nextInt(5);
                        long actual = random.nextInt(41);
                        Reservation r = limiter.reserve(rule, "k", estimate);
                        if (r.allowed()) {
                            r.commit(actual);
                            reported.addAndGet(actual);
                        }
                        // A tight rule: refusals charge nothing, admitted work its cost (at most
                        // 8 threads x 40 x 5 = 1600 = 8 x 200: within the debt's bound).
                        long small = random.nextInt(6);
                        Reservation t2 = limiter.reserve(tight, "k", 1);
                        if (t2.allowed()) {
                            t2.commit(small);
                            reportedTight.addAndGet(small);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            assertThat(1_000_000 - a.peek(rule, "k").remaining()).isEqualTo(reported.get());
            try (var jedis = valkey.connect()) {
                String state = jedis.get("rl:v1:tight:fixed-window:{k}");
                long counted = state == null ? 0 : Long.parseLong(state.split(":")[1]);
                assertThat(counted).isEqualTo(reportedTight.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** A charge the store cannot take: never thrown, reported, and a local policy's fallback counts it. */
    @Test
    void aChargeTheStoreCannotTakeGoesByThePolicy() {
        Rule rule = Rule.fixedWindow("down", 10, Duration.ofHours(1));
        List<String> events = new ArrayList<>();
        RateLimitListener listener = recording(events);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(shortTimeouts())
                .policy(rule, FailurePolicy.local(Rule.fixedWindow("down", 10, Duration.ofHours(1))))
                .listener(listener).build()) {
            Reservation r = limiter.reserve(rule, "k", 1);
            assertThat(r.allowed()).isTrue();
            valkey.stop();
            try {
                assertThat(r.commit(30)).isTrue();
                synchronized (events) {
                    assertThat(events).contains("down:CHARGE_DROPPED");
                }
                Decision whileDown = limiter.acquire(rule, "k");
                assertThat(whileDown.allowed()).as("the fallback counted the charge: %s", whileDown).isFalse();
            } finally {
                valkey.start();
            }
        }
    }

    /**
     * Admitted by an open policy while Valkey was down: once the work's cost is known, Valkey is
     * charged all of it if it answers again, and the cost is reported as not counted if not.
     */
    @Test
    void workAdmittedByAnOpenPolicyIsChargedOnceValkeyAnswers() {
        Rule rule = Rule.tokenBucket("open", 10, Duration.ofMinutes(1));
        List<String> events = new ArrayList<>();
        RateLimitListener listener = recording(events);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(shortTimeouts())
                .listener(listener).build()) {
            valkey.stop();
            try {
                Reservation r = limiter.reserve(rule, "k", 1);
                assertThat(r.decisions().get(0).basis()).isEqualTo(Decision.Basis.SKIPPED);
                assertThat(r.commit(5)).isTrue();
                synchronized (events) {
                    assertThat(events).contains("open:FALLBACK", "open:CHARGE_DROPPED");
                }
                Reservation later = limiter.reserve(rule, "k", 1);
                valkey.start();
                valkey.flushAll();
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (limiter.peek(rule, "k").basis() != Decision.Basis.SHARED && System.nanoTime() < deadline) {
                    Thread.sleep(50); // until the breaker lets a call through again
                }
                assertThat(later.commit(7)).isTrue();
                synchronized (events) {
                    assertThat(events).contains("open:CHARGED");
                }
                assertThat(limiter.peek(rule, "k").remaining()).as("all 7 charged to Valkey").isEqualTo(3);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                valkey.start();
            }
        }
    }

    /** A listener that adds "rule:EVENT" to {@code events}. */
    private static RateLimitListener recording(List<String> events) {
        return new RateLimitListener() {
            @Override
            public void onEvent(String name, Event event) {
                synchronized (events) {
                    events.add(name + ":" + event);
                }
            }
        };
    }

    /** A Valkey limiter that gives up on a stopped server soon. */
    private ValkeyRateLimiter.Builder shortTimeouts() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                .withSocketTimeout(Duration.ofMillis(300)).withConnectTimeout(Duration.ofMillis(300)));
    }

    private ValkeyRateLimiter limiter() {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .build();
    }
}
