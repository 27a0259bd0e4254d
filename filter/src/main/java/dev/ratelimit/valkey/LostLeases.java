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
 * Leases of concurrency rules that no request holds any more but Valkey may: taken by a call
 * whose reply was lost (a timeout while Valkey ran it, a stall), taken by one cluster slot
 * group of a request that another group failed, or whose release could not reach Valkey. Left
 * alone, each would block its rule until its lease timeout (60 s by default) with nothing in
 * progress. A lease is named after the call that took it, a number the caller chose, so it can
 * be released without the reply.
 *
 * <p>They are released after a later call that Valkey answered, at most once every
 * {@value #PAUSE_MILLIS} ms: a release that finds nothing (the call has not run yet, or never
 * reached Valkey, or was rejected) is tried again, {@value #ATTEMPTS} times in all, and none is
 * tried past its lease timeout, when Valkey has freed it anyway. At most
 * {@value #MAX_LEASES} are remembered; past that the oldest is forgotten (and times out).
 */
final class LostLeases {

    static final int MAX_LEASES = 10_000;
    static final int ATTEMPTS = 5;
    static final long PAUSE_MILLIS = 100;

    /** One call's leases of one rule and key: what a refund needs, and until when it matters. */
    record Lease(Claim claim, long call, long timesOutNanos, int attempts) {
    }

    private final ConcurrentLinkedQueue<Lease> leases = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicLong nextRelease;
    private final LongSupplier nanoTime;

    LostLeases(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.nextRelease = new AtomicLong(nanoTime.getAsLong());
    }

    /**
     * Remembers the leases a call may hold for a claim; claims of other algorithms hold none.
     *
     * @param claim the claim
     * @param call  the number of the call that took them (its reply's undo value)
     */
    void remember(Claim claim, long call) {
        if (claim.rule().algorithm() != Algorithm.CONCURRENCY) {
            return;
        }
        add(new Lease(claim, call, nanoTime.getAsLong() + claim.rule().window().toNanos(), 0));
    }

    private void add(Lease lease) {
        while (size.get() >= MAX_LEASES && leases.poll() != null) {
            size.decrementAndGet();
        }
        leases.add(lease);
        size.incrementAndGet();
    }

    /**
     * The leases to release now, taken out of the set: none while a release was tried less than
     * {@value #PAUSE_MILLIS} ms ago (by any thread), or when there are none.
     *
     * @return the leases still worth releasing
     */
    List<Lease> due() {
        if (leases.isEmpty()) {
            return List.of();
        }
        long now = nanoTime.getAsLong();
        long next = nextRelease.get();
        if (now - next < 0 || !nextRelease.compareAndSet(next, now + PAUSE_MILLIS * 1_000_000L)) {
            return List.of();
        }
        List<Lease> due = new ArrayList<>();
        for (Lease lease = leases.poll(); lease != null; lease = leases.poll()) {
            size.decrementAndGet();
            if (now - lease.timesOutNanos() < 0) {
                due.add(lease);
            }
        }
        return due;
    }

    /**
     * Puts back the leases a release did not free, for another try while they still matter.
     *
     * @param tried    what {@link #due()} gave
     * @param released for each, whether Valkey released it; null when the release did not
     *                 reach Valkey, which does not count as a try
     */
    void tried(List<Lease> tried, boolean[] released) {
        long now = nanoTime.getAsLong();
        for (int i = 0; i < tried.size(); i++) {
            Lease lease = tried.get(i);
            int attempts = released == null ? lease.attempts() : lease.attempts() + 1;
            if ((released == null || !released[i]) && attempts < ATTEMPTS && now - lease.timesOutNanos() < 0) {
                add(new Lease(lease.claim(), lease.call(), lease.timesOutNanos(), attempts));
            }
        }
    }

    /**
     * How many leases are remembered.
     *
     * @return the count
     */
    int size() {
        return size.get();
    }
}
