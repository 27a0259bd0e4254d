package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What local leases cost a bucket (token bucket, GCRA) in admissions, against a real Valkey
 * (README, "Local leases"): one instance is never held below what it would get without leases,
 * whatever the phase (a fresh key, a steady rate, a burst after idle); several instances fall
 * short by at most {@code (instances − 1) × (local-lease + 2 × margin)}, and not at all once a
 * lease went back on a key that would not have filled without it meanwhile (another instance
 * keeping it busy, or this instance's own units still refilling after the key sat idle). And
 * reservations given back give back exactly what they took. Each measure runs leased and
 * unleased keys through the same steps, on a clock the test moves.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseShortfallTest {

    private static final long START = 1_700_000_000_000L;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(START);

    LeaseShortfallTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private ValkeyRateLimiter limiter(Rule leased, int size, Duration time) {
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                .withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock);
        return (leased == null ? builder : builder.localLease(leased, size, time)).build();
    }

    private static Rule bucket(Algorithm algorithm, long limit, Duration window, long burst) {
        return Rule.of("b", algorithm, limit, window).toBuilder().burst(burst).build();
    }

    private static long take(ValkeyRateLimiter limiter, Rule rule, String key, int times) {
        long allowed = 0;
        for (int i = 0; i < times; i++) {
            allowed += limiter.acquire(rule, key).allowed() ? 1 : 0;
        }
        return allowed;
    }

    /** A fresh key asked back to back: leases of 1, 2, 4, 8, 16 and their margins never hold it below its burst. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aFreshKeyGetsItsWholeBurst(Algorithm algorithm) {
        Rule rule = bucket(algorithm, 50, Duration.ofSeconds(1), 100);
        try (ValkeyRateLimiter leased = limiter(rule, 16, Duration.ofMillis(400))) {
            assertThat(take(leased, rule, "fresh", 100)).as("100 back to back, leases of 16 for 400 ms").isEqualTo(100);
            assertThat(leased.acquire(rule, "fresh").allowed()).as("the 101st, with no time passed").isFalse();
        }
    }

    /** The README's own example: 1,000 a second, a burst of 2,000, leases of 50 for 50 ms. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void theReadmesExampleGetsItsWholeBurst(Algorithm algorithm) {
        Rule rule = bucket(algorithm, 1_000, Duration.ofSeconds(1), 2_000);
        try (ValkeyRateLimiter leased = limiter(rule, 50, Duration.ofMillis(50))) {
            assertThat(take(leased, rule, "readme", 2_000)).isEqualTo(2_000);
        }
    }

    /**
     * A steady rate within the limit, then a second idle, then a burst, on the server's clock as in
     * production: once the leases are over the key is as full as without them, and the burst gets
     * all of it.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aBurstAfterASteadyRateAndIdleGetsAsMuchAsWithoutLeases(Algorithm algorithm) throws Exception {
        Rule rule = bucket(algorithm, 50, Duration.ofSeconds(1), 100);
        try (ValkeyRateLimiter leased = serverClock(rule); ValkeyRateLimiter plain = serverClock(null)) {
            long steadyLeased = 0;
            long steadyPlain = 0;
            // 3 s at 40 a second, paced by the wall clock.
            long began = System.nanoTime();
            for (int i = 0; i < 120; i++) {
                steadyLeased += leased.acquire(rule, "l").allowed() ? 1 : 0;
                steadyPlain += plain.acquire(rule, "p").allowed() ? 1 : 0;
                long due = began + (i + 1) * 25_000_000L;
                while (System.nanoTime() < due) {
                    Thread.sleep(1);
                }
            }
            assertThat(steadyLeased).isEqualTo(steadyPlain).isEqualTo(120);
            Thread.sleep(1_000);
            assertThat(plain.peek(rule, "l", 1).remaining()).as("the leased key after a second idle, asked from outside")
                    .isEqualTo(plain.peek(rule, "p", 1).remaining()).isEqualTo(100);
            long began2 = System.nanoTime();
            long burstLeased = take(leased, rule, "l", 150);
            long burstPlain = take(plain, rule, "p", 150);
            // The bucket refills while the bursts run: at most that much more than the burst.
            long refill = (System.nanoTime() - began2) * 50 / 1_000_000_000L + 1;
            assertThat(burstLeased).as("a burst of 150 after idle, with leases").isBetween(100L, 100 + refill);
            assertThat(burstPlain).as("a burst of 150 after idle, without").isBetween(100L, 100 + refill);
        }
    }

    private ValkeyRateLimiter serverClock(Rule leased) {
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                .withSocketTimeout(Duration.ofSeconds(5)));
        return (leased == null ? builder : builder.localLease(leased, 16, Duration.ofMillis(400))).build();
    }

    /**
     * One instance, calm and busy phases: it falls short of what it would admit without leases by
     * at most two margins while its leases live (what its own leases hold back from a refused
     * request is given back first; what a give-back charges for refill the bucket would have lost
     * is bounded by the refill of a lease's time), and not at all once they are over: a burst after
     * idle gets as much as without leases.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void oneInstanceFallsShortByAtMostTwoMarginsAndNotOnceLeasesAreOver(Algorithm algorithm) throws Exception {
        Rule rule = bucket(algorithm, 50, Duration.ofSeconds(1), 100);
        Duration leaseTime = Duration.ofMillis(200);
        long margin = (leaseTime.toMillis() * 50 + 999) / 1000;
        try (ValkeyRateLimiter leased = limiter(rule, 16, leaseTime); ValkeyRateLimiter plain = limiter(null, 0, null)) {
            long totalLeased = 0;
            long totalPlain = 0;
            long worst = 0;
            for (int step = 0; step < 300; step++) {
                // Busy phases ask more than the rate allows; calm ones less.
                int asks = (step / 50) % 2 == 0 ? 1 : 4;
                long tl = take(leased, rule, "l", asks);
                long tp = take(plain, rule, "p", asks);
                totalLeased += tl;
                totalPlain += tp;
                worst = Math.max(worst, totalPlain - totalLeased);
                assertThat(totalLeased).as("admitted by step %d", step).isLessThanOrEqualTo(100 + step);
                assertThat(totalPlain - totalLeased).as("shortfall by step %d", step).isLessThanOrEqualTo(2 * margin);
                clock.advance(20);
            }
            // Idle: the leases end (the sweeper runs on real time: a little of each) and the key refills.
            for (int step = 0; step < 50; step++) {
                clock.advance(20);
                Thread.sleep(leaseTime.toMillis() / 20);
            }
            assertThat(take(leased, rule, "l", 150)).as("a burst after the leases are over")
                    .isEqualTo(take(plain, rule, "p", 150));
            System.out.println("LeaseShortfallTest " + algorithm + ": one instance admitted " + totalLeased
                    + " with leases, " + totalPlain + " without; worst shortfall " + worst + " (2 margins: " + 2 * margin
                    + ")");
        }
    }

    /**
     * Three instances, calm and busy phases: with leases they admit at most
     * {@code (instances − 1) × local-lease + instances × 2 × margin} fewer units than without, at
     * every step.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void threeInstancesFallShortByAtMostTheBound(Algorithm algorithm) throws Exception {
        Rule rule = bucket(algorithm, 50, Duration.ofSeconds(1), 300);
        Duration leaseTime = Duration.ofMillis(200);
        long margin = (leaseTime.toMillis() * 50 + 999) / 1000;
        long bound = 2 * 16 + 3 * 2 * margin;
        List<ValkeyRateLimiter> leased = List.of(limiter(rule, 16, leaseTime), limiter(rule, 16, leaseTime),
                limiter(rule, 16, leaseTime));
        List<ValkeyRateLimiter> plain = List.of(limiter(null, 0, null), limiter(null, 0, null), limiter(null, 0, null));
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            long totalLeased = 0;
            long totalPlain = 0;
            long worst = 0;
            for (int step = 0; step < 300; step++) {
                int asks = (step / 60) % 2 == 0 ? 1 : 5;
                List<Callable<long[]>> each = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    ValkeyRateLimiter l = leased.get(i);
                    ValkeyRateLimiter p = plain.get(i);
                    each.add(() -> new long[] {take(l, rule, "l", asks), take(p, rule, "p", asks)});
                }
                for (Future<long[]> done : pool.invokeAll(each)) {
                    totalLeased += done.get()[0];
                    totalPlain += done.get()[1];
                }
                worst = Math.max(worst, totalPlain - totalLeased);
                assertThat(totalLeased).as("admitted by step %d", step).isLessThanOrEqualTo(300 + step);
                assertThat(totalPlain - totalLeased).as("shortfall by step %d (bound %d)", step, bound)
                        .isLessThanOrEqualTo(bound);
                clock.advance(20);
            }
            System.out.println("LeaseShortfallTest " + algorithm + ": three instances admitted " + totalLeased
                    + " with leases, " + totalPlain + " without; worst shortfall " + worst + " (bound " + bound + ")");
        } finally {
            pool.shutdownNow();
            leased.forEach(ValkeyRateLimiter::close);
            plain.forEach(ValkeyRateLimiter::close);
        }
    }

    /**
     * Two instances, one calm (a tenth of the rate) and one busy (the rest), together at 110 %
     * of the rate. What the calm one's own bucket loses while the key stays busy is not charged to
     * its give-backs as long as the store's lease account shows the key could not have lost it;
     * the account counts a lease's served units as still lent, so while the key holds less debt
     * than its leases lent, both over-count, and what they over-count stays in the store until
     * the key next refills. That stops once the key holds more than its leases can lend: at most
     * {@code instances × (local-lease + 2 × margin)} more than instances in step fall short by
     * (README, "Local leases").
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aCalmInstanceBesideABusyOneCostsNoMoreThanTheBound(Algorithm algorithm) {
        Rule rule = bucket(algorithm, 50, Duration.ofSeconds(1), 100);
        Duration leaseTime = Duration.ofMillis(200);
        long margin = (leaseTime.toMillis() * 50 + 999) / 1000;
        long bound = 16 + 2 * 2 * margin + 2 * (16 + 2 * margin);
        try (ValkeyRateLimiter calm = limiter(rule, 16, leaseTime); ValkeyRateLimiter busy = limiter(rule, 16, leaseTime);
             ValkeyRateLimiter calmPlain = limiter(null, 0, null); ValkeyRateLimiter busyPlain = limiter(null, 0, null)) {
            long totalLeased = 0;
            long totalPlain = 0;
            long worst = 0;
            for (int step = 0; step < 6000; step++) {
                boolean calmTurn = step % 5 == 0;
                int asks = step % 10 == 1 ? 2 : 1;
                totalLeased += take(calmTurn ? calm : busy, rule, "l", asks);
                totalPlain += take(calmTurn ? calmPlain : busyPlain, rule, "p", asks);
                worst = Math.max(worst, totalPlain - totalLeased);
                assertThat(totalLeased).as("admitted by step %d", step).isLessThanOrEqualTo(100 + step);
                clock.advance(20);
            }
            System.out.println("LeaseShortfallTest " + algorithm + ": calm beside busy admitted " + totalLeased
                    + " with leases, " + totalPlain + " without; worst shortfall " + worst + " (bound " + bound + ")"
                    + " remaining " + calmPlain.peek(rule, "l", 1).remaining() + " vs " + calmPlain.peek(rule, "p", 1).remaining());
            assertThat(totalPlain - totalLeased).isLessThanOrEqualTo(bound);
        }
    }

    /**
     * Two instances on one key: a calm one whose lease sits unused past the moment its own use of
     * the key would have let the key fill, beside a busy one whose requests keep the key far from
     * full. Ten a second, a burst of 40, leases of 16 for 200 ms (margin 2), the clock moved by the
     * test. The busy instance takes 30 units and the calm one two, the second with a lease of one
     * beside it and its margin; 100 ms on the busy one takes two more; at 400 ms the calm one
     * closes, its lease's time over. Its own use (two units at 0 ms) would have refilled by 200 ms,
     * so its own bucket lost 200 ms of refill (two units) while the lease sat there; the key,
     * holding more debt than its leases lent all along, lost none. The give-back is charged the
     * lesser of the two, nothing: the key is then exactly what the same traffic leaves without
     * leases. Charged its own bucket's loss, it would stay two units short until it next refills.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aCalmInstancesGiveBackOnAKeyAnotherKeepsBusyIsChargedNothing(Algorithm algorithm) {
        Rule rule = bucket(algorithm, 10, Duration.ofSeconds(1), 40);
        try (ValkeyRateLimiter plain = limiter(null, 0, null)) {
            // The busy instance on the leased key, and the same traffic without leases on "p".
            try (ValkeyRateLimiter calm = limiter(rule, 16, Duration.ofMillis(200))) {
                assertThat(plain.acquireAll(List.of(Claim.of(rule, "l", 30))).allowed()).isTrue();
                assertThat(plain.acquireAll(List.of(Claim.of(rule, "p", 30))).allowed()).isTrue();
                for (int i = 0; i < 2; i++) {
                    assertThat(calm.acquire(rule, "l").allowed()).isTrue();
                    assertThat(plain.acquire(rule, "p").allowed()).isTrue();
                }
                assertThat(plain.peek(rule, "l", 1).remaining()).as("left beside the calm one's lease of one and its margin")
                        .isEqualTo(5);
                clock.advance(100);
                assertThat(take(plain, rule, "l", 2)).isEqualTo(2);
                assertThat(take(plain, rule, "p", 2)).isEqualTo(2);
                clock.advance(300);
            }
            long leased = plain.peek(rule, "l", 1).remaining();
            long without = plain.peek(rule, "p", 1).remaining();
            assertThat(leased).as("the key after the calm one's give-back, against the same traffic without leases")
                    .isEqualTo(without).isEqualTo(10);
            assertThat(take(plain, rule, "l", 15)).as("then admitted at once").isEqualTo(take(plain, rule, "p", 15));
        }
    }

    /**
     * The limiter's clock: the test's, and what the lease sweeper's thread reads of it counted, so
     * that the test can wait for a whole sweep at a time it set.
     */
    static final class SweepWatchingClock implements LongSupplier {
        private final ManualClock base;
        private long since = Long.MAX_VALUE;
        private int reads;

        SweepWatchingClock(ManualClock base) {
            this.base = base;
        }

        @Override
        public long getAsLong() {
            long now = base.getAsLong();
            if (Thread.currentThread().getName().equals("ratelimit-lease-sweeper")) {
                synchronized (this) {
                    if (now >= since) {
                        reads++;
                        notifyAll();
                    }
                }
            }
            return now;
        }

        /**
         * Moves the clock on, then waits until a whole sweep has run at the new time. A sweep reads
         * the clock as it begins and again as it ends (giving back what ended leases hold, none
         * here); with no lease out, nothing else reads it on the sweeper's thread. So of three
         * reads of the new time, at most the first is the end of a sweep begun before: the next
         * two are a sweep's beginning and end.
         */
        void advanceAndAwaitSweep(long millis) throws InterruptedException {
            synchronized (this) {
                base.advance(millis);
                since = base.getAsLong();
                reads = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (reads < 3) {
                    long left = deadline - System.nanoTime();
                    assertThat(left).as("the lease sweeper read the clock %d times in 30 s", reads).isPositive();
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            }
        }
    }

    /**
     * One instance, a key idle past the lease time while its own debt is still refilling: the
     * sweep that forgets idle keys keeps its account. Ten a second, a burst of 40, leases of 16
     * for 200 ms (margin 2). A request takes 20 units at 0 ms; at 800 ms (four lease times: a
     * sweep then looks for idle keys, and the test waits for one) 12 are still owed. Then, at once,
     * requests take a lease of one, run it out, and take a lease of two with its margin; at 900 ms
     * one unit of it is served; at 2,500 ms the limiter closes and the lease goes back. Its own
     * use of the key (the 20 units and the five after) would have refilled just then: no refill
     * was lost, and the key is exactly what the same traffic leaves without leases. An account
     * started afresh at 800 ms would have seen the five units refill by 1,300 ms and charged the
     * give-back the refill after; the store's lease account, which counts the served unit as still
     * lent, lets one unit of that through, and the key would stay short of it.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void anIdleKeyStillOwingKeepsItsAccountAndIsNotChargedRefillItDidNotLose(Algorithm algorithm) throws Exception {
        Rule rule = bucket(algorithm, 10, Duration.ofSeconds(1), 40);
        SweepWatchingClock watched = new SweepWatchingClock(clock);
        try (ValkeyRateLimiter plain = limiter(null, 0, null)) {
            try (ValkeyRateLimiter leased = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                    .withSocketTimeout(Duration.ofSeconds(5))).clientClock(watched)
                    .localLease(rule, 16, Duration.ofMillis(200)).build()) {
                // A key seen for the first time gets no lease: these 20 units are its own debt.
                assertThat(leased.acquireAll(List.of(Claim.of(rule, "l", 20))).allowed()).isTrue();
                assertThat(plain.acquireAll(List.of(Claim.of(rule, "p", 20))).allowed()).isTrue();
                watched.advanceAndAwaitSweep(800);
                assertThat(plain.peek(rule, "l", 1).remaining()).as("owed at 800 ms: 12 of 40").isEqualTo(28);
                // No lease, a lease of one, that lease run out, a lease of two beside the fourth unit.
                assertThat(take(leased, rule, "l", 4)).isEqualTo(4);
                assertThat(take(plain, rule, "p", 4)).isEqualTo(4);
                clock.advance(100);
                // Served from the lease of two: one unit of it admitted, one still held.
                assertThat(take(leased, rule, "l", 1)).isEqualTo(1);
                assertThat(take(plain, rule, "p", 1)).isEqualTo(1);
                clock.advance(1_600);
            }
            long leased = plain.peek(rule, "l", 1).remaining();
            long without = plain.peek(rule, "p", 1).remaining();
            assertThat(leased).as("the key once its leases went back, against the same traffic without leases")
                    .isEqualTo(without).isEqualTo(40);
            assertThat(take(plain, rule, "l", 45)).as("then admitted at once").isEqualTo(take(plain, rule, "p", 45));
        }
    }

    /**
     * Reservations given back give back exactly what they took: forty at once on twenty an hour,
     * the twenty allowed then cancelled at once, and the key is whole again: twenty more.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void reservationsCancelledTogetherGiveBackEveryUnit(Algorithm algorithm) throws Exception {
        Rule rule = Rule.of("r", algorithm, 20, Duration.ofHours(1));
        // The server's clock, as in production: the cancels come a few ms after the takes.
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                .withSocketTimeout(Duration.ofSeconds(5))).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                CyclicBarrier start = new CyclicBarrier(8);
                List<Callable<Reservation>> reserve = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    boolean first = i < 8;
                    reserve.add(() -> {
                        if (first) {
                            start.await();
                        }
                        return limiter.reserve(rule, "k");
                    });
                }
                List<Reservation> allowed = new ArrayList<>();
                for (Future<Reservation> taken : pool.invokeAll(reserve)) {
                    if (taken.get().allowed()) {
                        allowed.add(taken.get());
                    }
                }
                assertThat(allowed).hasSize(20);
                List<Callable<List<String>>> cancel = allowed.stream().<Callable<List<String>>>map(r -> r::cancel).toList();
                for (Future<List<String>> given : pool.invokeAll(cancel)) {
                    assertThat(given.get()).containsExactly("r");
                }
                List<Callable<Boolean>> again = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    again.add(() -> limiter.acquire(rule, "k").allowed());
                }
                long admitted = 0;
                for (Future<Boolean> a : pool.invokeAll(again)) {
                    admitted += a.get() ? 1 : 0;
                }
                assertThat(admitted).as("admitted after every reservation was given back").isEqualTo(20);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
