package dev.ratelimit.valkey;

import java.util.List;
import java.util.function.Consumer;

/**
 * One key's leases and demand in {@link Leases}; every field guarded by the entry itself. A key
 * has at most two leases: the one serving, and one taken ahead while it still served (see
 * {@link Leases#ahead}), which serves once the first has run out or ended.
 */
final class LeaseEntry {

    /** The lease serving, or null. */
    Lease lease;
    /** A lease taken ahead of the serving one's end, or null. */
    Lease next;
    /** The last request for the key (ms); long ago for a new key. */
    long lastSeen = Long.MIN_VALUE / 4;
    /** The size of the next lease, or -1 when the key was idle: no lease for it this time. */
    long demand;
    /** The remaining units the key's last take left in the store (a hint for the next size). */
    long storeRemaining = Long.MAX_VALUE;
    /** A call asking for a lease is on its way: others ask for none (each would withhold one). */
    boolean taking;
    boolean removed;

    /**
     * The lease that serves at {@code now}, if one holds units: the serving one, else the one
     * taken ahead, which then serves (the first ends: handed to {@code ended}).
     */
    Lease serving(long now, Consumer<Lease> ended) {
        if (next != null && (lease == null || !lease.live(now) || lease.left == 0)) {
            if (lease != null) {
                ended.accept(lease);
            }
            lease = next;
            next = null;
        }
        return lease != null && lease.live(now) && lease.left > 0 ? lease : null;
    }

    /**
     * A lease a call took for the key: taken ahead while another serves, it waits for that one
     * to be over; else it replaces what the entry held (handed to {@code ended}).
     */
    void install(Lease taken, long now, Consumer<Lease> ended) {
        if (next == null && serving(now, ended) != null) {
            next = taken;
            return;
        }
        if (lease != null) {
            ended.accept(lease);
        }
        if (next != null) {
            ended.accept(next);
        }
        lease = taken;
        next = null;
    }

    /**
     * Waits, the caller holding the entry's lock, for the call on its way that takes the key's
     * next lease ({@link #taking}): no longer than that call would take a request (a call of its
     * own), and it spares Valkey the call; bounded by the lease time all the same.
     *
     * @param waitUntil the {@link System#nanoTime()} at which to stop waiting
     * @return whether to look again (the call is over, or may be); false when the wait is up
     */
    boolean awaitLeaseCall(long waitUntil) {
        long left = waitUntil - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            wait(left / 1_000_000, (int) (left % 1_000_000));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Whether the lease is still this entry's (not replaced, dropped or forgotten). */
    boolean holds(Lease held) {
        return held != null && (held == lease || held == next);
    }

    /** Units its live leases hold at {@code now}. */
    long held(long now) {
        return (lease != null && lease.live(now) ? lease.left : 0) + (next != null && next.live(now) ? next.left : 0);
    }

    /** A lease that ended leaves the entry; the one taken ahead, if any, serves. */
    void drop(Lease ended) {
        if (ended == lease) {
            lease = next;
            next = null;
        } else if (ended == next) {
            next = null;
        }
    }

    /** Moves every lease of the entry to {@code all}. */
    void drainTo(List<Lease> all) {
        if (lease != null) {
            all.add(lease);
        }
        if (next != null) {
            all.add(next);
        }
        lease = null;
        next = null;
    }
}
