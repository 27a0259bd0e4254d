package dev.ratelimit.valkey.connection;

import dev.ratelimit.RateLimitListener;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Stops calling a store that keeps failing. It opens after {@code failures} consecutive
 * failures, provided that the last second saw at least twice that many calls and at least half
 * of them failed: then for
 * {@code openFor} every call is refused at once, with no network traffic, so each request gets
 * its rule's on-failure policy without waiting for a timeout. Then exactly one call goes through
 * as a probe: success closes the breaker, failure opens it again; never two calls in one open
 * period.
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
public final class CircuitBreaker {

    private static final System.Logger LOG = System.getLogger(CircuitBreaker.class.getName());
    /** The share of the last second's calls that must have failed for the breaker to open. */
    static final double OPENING_FAILURE_RATE = 0.5;

    private final int failures;
    private final long openForNanos;
    private final LongSupplier nanoClock;
    private final RateLimitListener listener;

    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final RecentCalls recent;
    /**
     * Closed, or open until a time and maybe probing: one object swapped whole, so that no
     * call sees half a transition (a failed probe's "no probe out" without its new open-until
     * let a second call through in the same open period).
     */
    private final AtomicReference<State> state = new AtomicReference<>(State.CLOSED);

    /**
     * A breaker.
     *
     * @param failures  consecutive failures that open it; 0 disables it
     * @param openFor   how long it stays open before one probe call
     * @param nanoClock {@link System#nanoTime()}, or a test clock
     * @param listener  told when it opens and closes
     */
    public CircuitBreaker(int failures, Duration openFor, LongSupplier nanoClock, RateLimitListener listener) {
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
     * Whether a call may go to the store now. Unless refused, the caller must report the
     * outcome with {@link #succeeded()} or {@link #failed(Permit)}, whatever the call throws:
     * a probe never reported keeps the breaker open for good.
     *
     * @return {@link Permit#REFUSED} while open (no call may be made), {@link Permit#CALL}
     *         while closed, or the probe's own permit when open-for has passed
     */
    Permit allowCall() {
        while (true) {
            State now = state.get();
            if (now == State.CLOSED) {
                return Permit.CALL;
            }
            if (now.probe() != null || nanoClock.getAsLong() - now.openUntil() < 0) {
                return Permit.REFUSED;
            }
            // Open-for has passed: let exactly one probe through.
            Permit probe = new Permit();
            if (state.compareAndSet(now, new State(now.openUntil(), probe))) {
                return probe;
            }
        }
    }

    /** A call succeeded: the store answers; close if open. */
    void succeeded() {
        consecutiveFailures.set(0);
        recent.record(false, 0);
        if (state.getAndSet(State.CLOSED) != State.CLOSED) {
            LOG.log(System.Logger.Level.INFO, "Valkey answers again: circuit breaker closed, calls resume");
            listener.onBreakerChange(false);
        }
    }

    /**
     * A call failed: count it; open, or stay open after a failed probe. Only the probe's own
     * failure starts the next open period: a call let through before the breaker opened may
     * fail while the probe is out, and must not let a second probe out.
     *
     * @param permit what {@link #allowCall()} returned for the call
     */
    void failed(Permit permit) {
        if (permit == Permit.REFUSED) {
            throw new IllegalArgumentException("permit " + permit + ": a refused call was not made, it cannot fail");
        }
        if (failures == 0) {
            return;
        }
        int count = consecutiveFailures.incrementAndGet();
        double rate = recent.record(true, 2L * failures);
        long now = nanoClock.getAsLong();
        State probing = state.get();
        if (permit != Permit.CALL && probing.probe() == permit
                && state.compareAndSet(probing, new State(now + openForNanos, null))) {
            return;
        }
        if (count >= failures && rate >= OPENING_FAILURE_RATE
                && state.compareAndSet(State.CLOSED, new State(now + openForNanos, null))) {
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
    public boolean isOpen() {
        return state.get() != State.CLOSED;
    }

    /**
     * Leave to make one call, handed back with its failure so that the breaker knows whether
     * the probe failed. The probe of each open period is a permit of its own.
     */
    static final class Permit {
        /** No call may be made. */
        static final Permit REFUSED = new Permit("refused");
        /** A call while closed. */
        static final Permit CALL = new Permit("call");

        private final String name;

        private Permit() {
            this("probe");
        }

        private Permit(String name) {
            this.name = name;
        }

        /**
         * Whether a call may be made.
         *
         * @return false for {@link #REFUSED}
         */
        boolean allowed() {
            return this != REFUSED;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * Closed ({@link #CLOSED}), or open until a nano time, with the permit of the probe that
     * is out, if one is.
     */
    private record State(long openUntil, Permit probe) {
        static final State CLOSED = new State(Long.MIN_VALUE, null);
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
