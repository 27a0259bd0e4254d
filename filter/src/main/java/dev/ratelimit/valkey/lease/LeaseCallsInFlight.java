package dev.ratelimit.valkey.lease;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The calls asking for a lease that have not been answered yet: closing the limiter waits for
 * them, so that a lease they take is one it gives back, before the client goes.
 */
final class LeaseCallsInFlight {

    private final AtomicInteger calls = new AtomicInteger();

    void begin() {
        calls.incrementAndGet();
    }

    void end() {
        calls.decrementAndGet();
    }

    /**
     * Waits until none is in flight, at most {@code maxMillis} (a call ends by its reply timeout
     * anyway; a lease taken past the wait is withheld until its window or the refill frees it).
     */
    void awaitNone(long maxMillis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        while (calls.get() > 0 && System.nanoTime() - until < 0) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
