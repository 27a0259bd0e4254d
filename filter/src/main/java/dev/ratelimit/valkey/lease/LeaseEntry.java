package dev.ratelimit.valkey.lease;

import java.util.List;
import java.util.function.Consumer;

/**
 * One key's leases and demand in {@link Leases}; every field guarded by the entry itself. A key
 * has at most two leases: the one serving, and one taken ahead while it still served (see
 * {@link Leases#ahead}), which serves once the first has run out or ended.
 */
public final class LeaseEntry {

    /** A key's entry, with no lease yet. */
    LeaseEntry() {
    }

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
     * Calls of this instance that write the key's state (a request's, a lease's, a reservation's
     * or its refund), each from before it reads the clock for its call until its units are
     * counted here: a give-back is worked out only once none is on its way (see
     * {@link LeaseReturner}), and none starts while one is ({@link #returning}).
     */
    int writing;
    /**
     * A give-back of the key's leases is worked out and not yet landed: no call of this instance
     * writes the key meanwhile.
     */
    boolean returning;
    /**
     * A give-back of the key waits for {@link #writing} to end: due once it has; no call of the
     * key starts meanwhile (else a key busy with one thread's calls would never give back).
     */
    boolean deferred;
    /**
     * Leases of the key handed to the give-back ({@link LeaseReturner#ended}) that no give-back
     * has picked up yet: a request that ran one out gives it back on its own thread (see
     * {@link Leases#flushEnded}); once picked up, {@link #returning} or {@link #deferred} holds
     * the key's next calls until it landed.
     */
    int unpicked;

    /**
     * This instance's own use of the key, as a bucket of the rule's rate fed by nothing else: its
     * debt in ticks and the refill it lost being full, up to {@link #simAt}. The key's real
     * bucket without this instance's leases holds at least this debt at any time (other traffic
     * only adds), so it loses at most this refill: what a lease's give-back charges (see
     * {@link Lease}). Buckets only; a fixed window's lease charges nothing.
     */
    private long simDebt;
    private long simLost;
    private long simAt = Long.MIN_VALUE;
    /** The simulation's lost refill up to which give-backs were charged for it (see {@link Lease}). */
    private long charged;
    /** This key's leases (and remnants) taken and not yet given back, of the debt {@link #generation}. */
    private int lent;
    /**
     * The generation of the key's debt in the store (a bucket's, see {@code bucket.lua}) that
     * this instance's latest take found, and that take's time; 0 before any.
     */
    private long generation;
    private long generationAt = Long.MIN_VALUE;

    /**
     * The simulation brought to {@code at} (a time before the last one counts as the last:
     * used later, the units only make the bucket lose more, never less).
     */
    private void advance(long at, long limit) {
        if (simAt == Long.MIN_VALUE) {
            simAt = at;
            return;
        }
        long t = Math.max(at, simAt);
        long refill = (t - simAt) * limit;
        if (refill > simDebt) {
            simLost += refill - simDebt;
            simDebt = 0;
        } else {
            simDebt -= refill;
        }
        simAt = t;
    }

    /**
     * Counts units this instance admitted for the key at {@code at}: served by a lease, or taken
     * by the store as a request's own.
     */
    void consumed(long at, long units, long limit, long window) {
        advance(at, limit);
        simDebt += units * window;
    }

    /**
     * Units counted as admitted at {@code since} went back at {@code at} (a request refused after
     * they were counted): taken off the debt; and the refill the simulation, holding them
     * meanwhile, may not have counted as lost (at most theirs, at most the refill in between)
     * counts as lost, so that no give-back charges less for it.
     */
    void unconsumed(long at, long units, long limit, long window, long since) {
        advance(at, limit);
        simDebt = Math.max(0, simDebt - units * window);
        simLost += Math.min(units * window, Math.max(0, at - since) * limit);
    }

    /**
     * A refund made alike with leases and without (a reservation cancelled, a layer's units given
     * back after another refused) took {@code ticks} off the key's debt in the store at {@code at}:
     * off the simulation's too, which so stays the bucket without leases.
     */
    void returned(long at, long ticks, long limit) {
        advance(at, limit);
        simDebt = Math.max(0, simDebt - ticks);
    }

    /**
     * A take of this instance at {@code at} wrote the key's debt as generation {@code gen} (its
     * answer's second undo value). Another than the last one seen means the store's bucket was
     * full before it and started its debt afresh: the leases lent before have nothing left there
     * to give back (the store takes no give-back to another generation; their units refilled
     * with the bucket, see {@link #current}), and the refill this instance's bucket lost until
     * then the store lost too, so no give-back is charged for it. Without this, a give-back held
     * up past a bucket that filled (its sweeper late) would keep the stretch of lost refill open
     * across it, and charge the key's next give-backs for refill no bucket lost.
     */
    void generation(long gen, long at, long limit) {
        if (gen <= 0 || gen == generation || at < generationAt) {
            return;
        }
        generation = gen;
        generationAt = at;
        lent = 0;
        charged = lostBy(at, limit);
    }

    /** Whether a lease taken with {@code gen} is of the debt the store holds now, as far as this instance saw. */
    boolean current(long gen) {
        return generation == 0 || gen == generation;
    }

    /**
     * A lease of the key is taken at {@code at}: the first of several not yet given back starts
     * the stretch whose lost refill their give-backs are charged (refill lost before it was lost
     * with no lease of the key held: the store lost it too).
     */
    void lent(long at, long limit) {
        if (lent++ == 0) {
            charged = lostBy(at, limit);
        }
    }

    /**
     * What a give-back sent at {@code at} is charged for refill lost (see {@link Lease}): what the
     * simulation lost since the last charge, up to the {@code owed} ticks it gives back; the rest
     * goes to the key's next give-back, and is dropped with the last one.
     *
     * @return the charge, ticks
     */
    long charge(long at, long limit, long owed) {
        long due = lostBy(at, limit) - charged;
        long charge = Math.max(0, Math.min(due, owed));
        charged += charge;
        if (--lent <= 0) {
            lent = 0;
            charged = simLost;
        }
        return charge;
    }

    /**
     * Whether a lease of the key (or a remnant) is out, its give-back not yet worked out, or a
     * call of this instance or a give-back is on its way to the key: the entry is then kept, as
     * its simulation and marks are what those go by.
     */
    boolean busy() {
        return lent > 0 || writing > 0 || returning || deferred;
    }

    /**
     * The time the simulation has reached: never before {@code at}, later when this instance
     * counted units at a later time meanwhile (another thread read the clock after the caller).
     */
    long simulatedAt(long at) {
        return Math.max(at, simAt);
    }

    /** The refill the simulation lost by {@code at}, ticks. */
    long lostBy(long at, long limit) {
        advance(at, limit);
        return simLost;
    }

    /** The simulation's debt at {@code at}, ticks. */
    long debtAt(long at, long limit) {
        advance(at, limit);
        return simDebt;
    }

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
        return await(waitUntil);
    }

    /**
     * Waits, the caller holding the entry's lock, for its {@link #writing} or {@link #returning}
     * to change (both notify the entry), until {@code waitUntil} ({@link System#nanoTime()}).
     *
     * @return whether to look again; false when the wait is up
     */
    boolean await(long waitUntil) {
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
