package dev.ratelimit.valkey;

import dev.ratelimit.RateLimitListener;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Stops calling a store that keeps failing. It opens after {@code failures} consecutive
 * failures, provided that the last second saw at least twice that many calls and at least half
 * of them failed: then for
 * {@code openFor} every call is refused at once, with no network traffic, so each request gets
 * its rule's on-failure policy without waiting for a timeout. Then exactly one call goes through
 * as a probe: success closes the breaker, failure opens it again.
 *
 * <p>The rate is what tells a busy server from a dead one. A saturated Valkey makes calls time
 * out in bursts (every caller waiting on the same slow moment fails at once) while it still
 * answers most of them; opening the breaker then would turn every request, answered or not,
 * into its rule's failure policy, which for {@code on-failure=open} means no limit at all. With
 * the rate, a busy server's timed-out calls get the policy one by one, and only a server that
 * fails most calls is stopped being called.
 *
 * <p>Opening and closing are logged once each and reported to the listener.
 */
final class CircuitBreaker {

    private static final System.Logger LOG = System.getLogger(CircuitBreaker.class.getName());
    /** The share of the last second's calls that must have failed for the breaker to open. */
    static final double OPENING_FAILURE_RATE = 0.5;

    private final int failures;
    private final long openForNanos;
    private final LongSupplier nanoClock;
    private final RateLimitListener listener;

    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final RecentCalls recent;
    /** While open: the nano time calls may resume (with one probe); Long.MIN_VALUE when closed. */
    private final AtomicLong openUntil = new AtomicLong(Long.MIN_VALUE);
    private final AtomicBoolean probing = new AtomicBoolean();

    /**
     * A breaker.
     *
     * @param failures  consecutive failures that open it; 0 disables it
     * @param openFor   how long it stays open before one probe call
     * @param nanoClock {@link System#nanoTime()}, or a test clock
     * @param listener  told when it opens and closes
     */
    CircuitBreaker(int failures, Duration openFor, LongSupplier nanoClock, RateLimitListener listener) {
        if (failures < 0) {
            throw new IllegalArgumentException("breaker failures " + failures + " must be at least 0 (0 disables it)");
        }
        if (openFor.isNegative() || openFor.isZero()) {
            throw new IllegalArgumentException("breaker open-for " + openFor + " must be positive");
        }
        this.failures = failures;
        this.openForNanos = openFor.toNanos();
        this.nanoClock = nanoClock;
        this.listener = listener;
        this.recent = new RecentCalls(nanoClock);
    }

    /**
     * Whether a call may go to the store now. When it returns true the caller must report the
     * outcome with {@link #succeeded()} or {@link #failed()}.
     *
     * @return false while open (no call may be made), true otherwise
     */
    boolean allowCall() {
        long until = openUntil.get();
        if (until == Long.MIN_VALUE) {
            return true;
        }
        if (nanoClock.getAsLong() - until < 0) {
            return false;
        }
        // Open-for has passed: let exactly one probe through.
        return probing.compareAndSet(false, true);
    }

    /** A call succeeded: the store answers; close if open. */
    void succeeded() {
        consecutiveFailures.set(0);
        recent.record(false, 0);
        probing.set(false);
        if (openUntil.getAndSet(Long.MIN_VALUE) != Long.MIN_VALUE) {
            LOG.log(System.Logger.Level.INFO, "Valkey answers again: circuit breaker closed, calls resume");
            listener.onBreakerChange(false);
        }
    }

    /** A call failed: count it; open, or stay open after a failed probe. */
    void failed() {
        if (failures == 0) {
            return;
        }
        boolean wasProbe = probing.getAndSet(false);
        int count = consecutiveFailures.incrementAndGet();
        double rate = recent.record(true, 2L * failures);
        if (wasProbe) {
            openUntil.set(nanoClock.getAsLong() + openForNanos);
        } else if (count >= failures && rate >= OPENING_FAILURE_RATE
                && openUntil.compareAndSet(Long.MIN_VALUE, nanoClock.getAsLong() + openForNanos)) {
            LOG.log(System.Logger.Level.WARNING, "Valkey failed {0} times in a row and {1}% of the calls of the last "
                    + "second: circuit breaker open, no calls for {2} ms at a time; each rule''s on-failure policy "
                    + "decides meanwhile", count, Math.round(rate * 100), openForNanos / 1_000_000);
            listener.onBreakerChange(true);
        }
    }

    /**
     * Whether the breaker is open now (calls refused).
     *
     * @return true while open, including while a probe is out
     */
    boolean isOpen() {
        return openUntil.get() != Long.MIN_VALUE;
    }

    /** Calls and failures of the last second, in ten buckets of 100 ms. */
    private static final class RecentCalls {
        private static final int BUCKETS = 10;
        private static final long BUCKET_NANOS = 100_000_000L;

        private final LongSupplier nanoClock;
        private final long[] bucketOf = new long[BUCKETS];
        private final int[] calls = new int[BUCKETS];
        private final int[] failed = new int[BUCKETS];

        RecentCalls(LongSupplier nanoClock) {
            this.nanoClock = nanoClock;
            java.util.Arrays.fill(bucketOf, Long.MIN_VALUE);
        }

        /**
         * Records a call and returns the failure rate of the last second, this call included; 0
         * while the second holds fewer than {@code atLeast} calls, too few to tell a stall
         * that made every caller fail at once from a dead server.
         */
        synchronized double record(boolean failure, long atLeast) {
            long bucket = Math.floorDiv(nanoClock.getAsLong(), BUCKET_NANOS);
            int at = (int) Math.floorMod(bucket, BUCKETS);
            if (bucketOf[at] != bucket) {
                bucketOf[at] = bucket;
                calls[at] = 0;
                failed[at] = 0;
            }
            calls[at]++;
            if (failure) {
                failed[at]++;
            }
            long total = 0;
            long failures = 0;
            for (int i = 0; i < BUCKETS; i++) {
                if (bucket - bucketOf[i] < BUCKETS) {
                    total += calls[i];
                    failures += failed[i];
                }
            }
            return total < atLeast ? 0 : (double) failures / total;
        }
    }
}
