package dev.ratelimit.valkey;

import dev.ratelimit.RateLimitListener;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Stops calling a store that keeps failing. After {@code failures} consecutive failures it
 * opens: for {@code openFor} every call is refused at once, with no network traffic, so each
 * request gets its rule's on-failure policy without waiting for a timeout. Then exactly one
 * call goes through as a probe: success closes the breaker, failure opens it again.
 *
 * <p>Opening and closing are logged once each and reported to the listener.
 */
final class CircuitBreaker {

    private static final System.Logger LOG = System.getLogger(CircuitBreaker.class.getName());

    private final int failures;
    private final long openForNanos;
    private final LongSupplier nanoClock;
    private final RateLimitListener listener;

    private final AtomicInteger consecutiveFailures = new AtomicInteger();
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
        if (wasProbe) {
            openUntil.set(nanoClock.getAsLong() + openForNanos);
        } else if (count >= failures && openUntil.compareAndSet(Long.MIN_VALUE, nanoClock.getAsLong() + openForNanos)) {
            LOG.log(System.Logger.Level.WARNING, "Valkey failed {0} times in a row: circuit breaker open, no calls "
                    + "for {1} ms at a time; each rule''s on-failure policy decides meanwhile", count, openForNanos / 1_000_000);
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
}
