package dev.ratelimit.valkey;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Permits of concurrency rules that no request holds any more but Valkey may: taken by a call
 * whose reply was lost (a timeout while Valkey ran it, a stall), taken by one cluster slot
 * group of a request that another group failed, or whose release could not reach Valkey. Left
 * alone, each would block its rule until its permit timeout (60 s by default) with nothing in
 * progress. A permit is named after the call that took it, a number the caller chose, so it can
 * be released without the reply.
 *
 * <p>They are released after a later call that Valkey answered, at most once every
 * {@value #PAUSE_MILLIS} ms: a release that finds nothing (the call has not run yet, or never
 * reached Valkey, or was rejected) is tried again, {@value #ATTEMPTS} times in all, and none is
 * tried past its permit timeout, when Valkey has freed it anyway. At most
 * {@value #MAX_PERMITS} are remembered; past that the oldest is forgotten (and times out).
 */
final class LostPermits {

    static final int MAX_PERMITS = 10_000;
    static final int ATTEMPTS = 5;
    static final long PAUSE_MILLIS = 100;

    /** One call's permits of one rule and key: what a refund needs, and until when it matters. */
    record Permit(Claim claim, long call, long timesOutNanos, int attempts) {
    }

    private final ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicLong nextRelease;
    private final LongSupplier nanoTime;

    LostPermits(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.nextRelease = new AtomicLong(nanoTime.getAsLong());
    }

    /**
     * Remembers the permits a call may hold for a claim; claims of other algorithms hold none.
     *
     * @param claim the claim
     * @param call  the number of the call that took them (its reply's undo value)
     */
    void remember(Claim claim, long call) {
        if (claim.rule().algorithm() != Algorithm.CONCURRENCY) {
            return;
        }
        add(new Permit(claim, call, nanoTime.getAsLong() + claim.rule().window().toNanos(), 0));
    }

    private void add(Permit permit) {
        while (size.get() >= MAX_PERMITS && permits.poll() != null) {
            size.decrementAndGet();
        }
        permits.add(permit);
        size.incrementAndGet();
    }

    /**
     * The permits to release now, taken out of the set: none while a release was tried less than
     * {@value #PAUSE_MILLIS} ms ago (by any thread), or when there are none.
     *
     * @return the permits still worth releasing
     */
    List<Permit> due() {
        if (permits.isEmpty()) {
            return List.of();
        }
        long now = nanoTime.getAsLong();
        long next = nextRelease.get();
        if (now - next < 0 || !nextRelease.compareAndSet(next, now + PAUSE_MILLIS * 1_000_000L)) {
            return List.of();
        }
        List<Permit> due = new ArrayList<>();
        for (Permit permit = permits.poll(); permit != null; permit = permits.poll()) {
            size.decrementAndGet();
            if (now - permit.timesOutNanos() < 0) {
                due.add(permit);
            }
        }
        return due;
    }

    /**
     * Puts back the permits a release did not free, for another try while they still matter.
     *
     * @param tried    what {@link #due()} gave
     * @param released for each, whether Valkey released it; null when the release did not
     *                 reach Valkey, which does not count as a try
     */
    void tried(List<Permit> tried, boolean[] released) {
        long now = nanoTime.getAsLong();
        for (int i = 0; i < tried.size(); i++) {
            Permit permit = tried.get(i);
            int attempts = released == null ? permit.attempts() : permit.attempts() + 1;
            if ((released == null || !released[i]) && attempts < ATTEMPTS && now - permit.timesOutNanos() < 0) {
                add(new Permit(permit.claim(), permit.call(), permit.timesOutNanos(), attempts));
            }
        }
    }

    /**
     * How many permits are remembered.
     *
     * @return the count
     */
    int size() {
        return size.get();
    }
}
