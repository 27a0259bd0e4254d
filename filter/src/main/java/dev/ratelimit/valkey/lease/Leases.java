package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * The leases this limiter holds, per rule and key, and how they grow with demand: a key seen
 * once now and then gets none (its units would be given back unused); a key asked for again
 * within its rule's lease time gets a lease twice the size of the last, up to the rule's size,
 * and then as many units as its last lease served. A lease that stops serving (run out, replaced,
 * its time over, or its key refused) gives back at once what it did not use (see {@link Lease}):
 * on the sweeper's thread, or on the request's own when the request needs it there; a sweep
 * every quarter of the shortest lease time ends those whose time is over. A give-back Valkey
 * cannot take is dropped, as refunds are: the units stay counted until their window or refill
 * frees them, never granted twice.
 */
public final class Leases implements AutoCloseable {

    private record Slot(Rule rule, String key) { }

    /** A lease and the entry it was taken for. */
    private record Held(LeaseEntry entry, Lease lease) { }

    private final Map<String, LeasePolicy> policies;
    private final LongSupplier clock;
    private final LeaseReturner returns;
    private final ConcurrentHashMap<Slot, LeaseEntry> entries = new ConcurrentHashMap<>();
    /**
     * Every key's slot, once, in the order its entry was made: the idle scan walks this rather
     * than the map, whose table keeps the size of its busiest moment (a burst of new keys) and
     * would be walked whole at every scan.
     */
    private final ConcurrentLinkedQueue<Slot> made = new ConcurrentLinkedQueue<>();
    /** The slots in {@link #made}: a queue's own size is counted by walking it. */
    private final AtomicInteger madeCount = new AtomicInteger();
    /** The leases taken and not yet ended, for the sweeper. */
    private final ConcurrentLinkedQueue<Held> live = new ConcurrentLinkedQueue<>();
    /** How often keys idle for longer than their lease time are dropped: four times the longest. */
    private final long idleScanMillis;
    /** Touched by the sweeper thread only. */
    private long lastIdleScan = Long.MIN_VALUE / 4;
    private final ScheduledExecutorService sweeper;
    /** Set by {@link #close}: no lease is asked for after it. */
    private volatile boolean closed;
    private final LeaseCallsInFlight inFlight = new LeaseCallsInFlight();

    /**
     * The leases of a limiter.
     *
     * @param policies each leasing rule's policy, by rule name (empty: no leases)
     * @param clock    the lease clock, epoch ms
     * @param store    where what leases did not use goes back
     */
    public Leases(Map<String, LeasePolicy> policies, LongSupplier clock, LeaseReturner.GiveBack store) {
        // A lease that stops serving gives back at once, on the sweeper's thread, not at the next sweep.
        this.returns = new LeaseReturner(store, clock, this::giveBackSoon);
        this.policies = Map.copyOf(policies);
        this.clock = clock;
        this.idleScanMillis = 4 * policies.values().stream().mapToLong(p -> p.time().toMillis()).max().orElse(100);
        long period = Math.max(5, policies.values().stream().mapToLong(p -> p.time().toMillis()).min().orElse(100) / 4);
        this.sweeper = policies.isEmpty() ? null : LeaseSweeper.every(period, this::sweep);
    }

    /** Whether any rule leases. */
    public boolean enabled() {
        return sweeper != null;
    }

    /** The limiter's clock for leases (ms): the client clock when it has one, else a monotonic one. */
    long now() {
        return clock.getAsLong();
    }

    /**
     * The policy of a claim's rule, or null when its units are not leased: only enforcing rules
     * that do not count rejected attempts, of an algorithm whose leases keep its bound.
     */
    public LeasePolicy policy(Claim claim) {
        Rule rule = claim.rule();
        if (rule.shadow() || rule.countRejected() || !LeasePolicy.supports(rule.algorithm())) {
            return null;
        }
        return policies.get(rule.name());
    }

    /**
     * What the claim's key's live lease can serve: up to the claim's cost, taken at once (the
     * rest is asked of the store with the request); null when it has none. {@link #putBack}
     * returns the units if the request is rejected.
     */
    Lease.Served serve(Claim claim, LeasePolicy policy, long now) {
        long waitUntil = System.nanoTime() + policy.time().toNanos();
        while (true) {
            LeaseEntry entry = entry(new Slot(claim.rule(), claim.key()));
            synchronized (entry) {
                if (entry.removed) {
                    continue;
                }
                if (now - entry.lastSeen > policy.time().toMillis()) {
                    entry.demand = -1;
                }
                entry.lastSeen = now;
                Lease lease = entry.serving(now, returns::ended);
                if (lease == null && entry.taking && !closed && entry.awaitLeaseCall(waitUntil)) {
                    continue;
                }
                if (lease == null) {
                    return null;
                }
                long units = Math.min(lease.left, claim.cost());
                lease.left -= units;
                consumed(entry, claim.rule(), now, units);
                return new Lease.Served(lease, units, lease.served(now), now);
            }
        }
    }

    /**
     * After a request its lease served was allowed: a lease it ran out ends now, so that its
     * margin goes back at once rather than at the next sweep (a key taking leases of 1, 2, 4, 8
     * would otherwise hold a margin for each), and the key's next lease is as large as this one.
     * (Not when it served: a request refused after that puts its units back into the lease.)
     */
    void kept(Claim claim, Lease.Served served) {
        Lease lease = served.lease();
        LeaseEntry entry = entries.get(new Slot(claim.rule(), claim.key()));
        if (entry == null) {
            return;
        }
        synchronized (entry) {
            if (lease.left == 0 && entry.holds(lease)) {
                entry.demand = lease.size;
                entry.drop(lease);
                returns.ended(lease);
            }
        }
    }

    /** Returns units {@link #serve} took for a request that was rejected. */
    void putBack(Claim claim, Lease.Served served) {
        Lease lease = served.lease();
        LeaseEntry entry = lease.entry;
        Lease remnant = null;
        long now = now();
        synchronized (entry) {
            boolean held = entry.holds(lease);
            if (!held && !closed) {
                // Ended meanwhile (run out as this request took its last units, a lease taken ahead
                // serving now): its give-back may be gone, so these go back on their own. Lent
                // first, so that the refill unconsumed counts as lost is charged to them.
                remnant = lease.remnant(served.units(), now);
            }
            unconsumed(entry, claim.rule(), now, served.units(), served.at());
            if (held) {
                lease.left += served.units();
            } else if (remnant != null) {
                returns.ended(remnant);
            }
        }
        if (remnant != null) {
            // Now, on this thread: the request's answer describes the key after them.
            returns.due();
        }
    }

    /**
     * How many units to ask beside the claim's own for a new lease (its size plus its margin),
     * from the key's demand: 0 for a key not asked for within its lease time, and 0 when a lease
     * of the key holds units again since {@link #serve} found none.
     */
    long extra(Claim claim, LeasePolicy policy, long now) {
        LeaseEntry entry = entries.get(new Slot(claim.rule(), claim.key()));
        if (entry == null) {
            return 0;
        }
        synchronized (entry) {
            if (closed || entry.taking) {
                return 0;
            }
            if (entry.held(now) > 0) {
                // Another thread's call installed a lease after serve found the key's empty (and
                // none on its way): a second one now would go beside it as the one taken ahead,
                // both full, or replace both and hold their units until their give-back lands,
                // which waits for the key's calls on their way. Either way the key would withhold
                // up to twice the rule's size. The request takes its own units; the lease serves
                // the next ones.
                return 0;
            }
            if (entry.demand < 0) {
                // Seen once now and then: a lease would go back unused.
                entry.demand = 0;
                return 0;
            }
            long margin = policy.margin(claim.rule());
            // Never more than the store had left after the key's last take: a call asking for more
            // than is there is refused, and the request asked again without a lease.
            long room = Math.min(policy.capacity(claim.rule()), entry.storeRemaining) - claim.cost() - margin;
            long size = Math.min(entry.demand == 0 ? 1 : entry.demand * 2, Math.min(policy.size(), room));
            entry.demand = Math.max(0, size);
            return size < 1 ? 0 : asking(entry, size, size, margin);
        }
    }

    /**
     * How many units to ask for a lease taken ahead, beside none of the request's, after a
     * request its key's lease served: due when the lease has served half its units within half
     * its time, so that the key's next lease is there before this one runs out and its requests
     * meanwhile need no call. Both leases together hold at most the rule's size (and a bucket's
     * two margins, each refilling): units withheld stay within the README's bound. 0 when none is due.
     */
    long ahead(Claim claim, LeasePolicy policy, Lease served, long now) {
        LeaseEntry entry = entries.get(new Slot(claim.rule(), claim.key()));
        if (entry == null) {
            return 0;
        }
        synchronized (entry) {
            boolean halfUsedInHalfTime = served.left * 2 <= served.size
                    && (now - served.start) * 2 < policy.time().toMillis();
            if (closed || entry.taking || entry.next != null || entry.lease != served || !halfUsedInHalfTime) {
                return 0;
            }
            long margin = policy.margin(claim.rule());
            long room = Math.min(policy.capacity(claim.rule()), entry.storeRemaining) - margin;
            long size = Math.min(Math.max(1, entry.demand) * 2, Math.min(policy.size() - served.left, room));
            // Capped by what the serving lease still holds, it does not lower the key's demand.
            return size < 1 ? 0 : asking(entry, Math.max(entry.demand, size), size, margin);
        }
    }

    /** A call on its way asks for a lease of {@code size} units (and the margin): none other for the key. */
    private long asking(LeaseEntry entry, long demand, long size, long margin) {
        entry.demand = demand;
        entry.taking = true;
        inFlight.begin();
        return size + margin;
    }

    /** The call that asked {@link #extra} or {@link #ahead} for the key's lease is over (answered or failed). */
    void settled(Claim claim) {
        inFlight.end();
        LeaseEntry entry = entries.get(new Slot(claim.rule(), claim.key()));
        if (entry != null) {
            synchronized (entry) {
                entry.taking = false;
                entry.notifyAll(); // requests waiting for its lease (awaitLeaseCall)
            }
        }
    }

    /**
     * A call of this instance that writes the claims' keys (a request's, a lease's, a
     * reservation's or its refund) is about to read its clock: for each leasing claim, it waits
     * for a give-back of the key on its way (at most the rule's lease time), then counts as on
     * its way until {@link #written}, which must follow, also when the call fails. A give-back of
     * the key's leases meanwhile waits for it (see {@link LeaseReturner#all}): worked out while the
     * call's units are not yet counted here, or landing after the call's write, it would charge
     * refill the key without leases never lost. The caller holds no entry's lock, and between the
     * two gives nothing back on its own thread.
     *
     * @return the entries to hand to {@link #written}
     */
    List<LeaseEntry> writing(List<Claim> claims) {
        long patience = 0;
        for (Claim claim : claims) {
            LeasePolicy policy = policy(claim);
            patience = Math.max(patience, policy == null ? 0 : policy.time().toNanos());
        }
        List<LeaseEntry> marked = new ArrayList<>(claims.size());
        if (patience == 0) {
            return marked; // no leasing claim
        }
        long waitUntil = System.nanoTime() + patience;
        boolean patient = true;
        while (true) {
            LeaseEntry blocked = null;
            for (Claim claim : claims) {
                if (policy(claim) == null) {
                    continue;
                }
                Slot slot = new Slot(claim.rule(), claim.key());
                while (blocked == null) {
                    LeaseEntry entry = entry(slot);
                    synchronized (entry) {
                        if (entry.removed) {
                            continue;
                        }
                        if (patient && !closed && (entry.returning || entry.deferred)) {
                            blocked = entry;
                            break;
                        }
                        entry.writing++;
                        marked.add(entry);
                        break;
                    }
                }
                if (blocked != null) {
                    break;
                }
            }
            if (blocked == null) {
                return marked;
            }
            // Waits holding none of its keys, so that no two calls wait for each other's give-backs.
            written(marked);
            marked.clear();
            synchronized (blocked) {
                while ((blocked.returning || blocked.deferred) && !closed && patient) {
                    patient = blocked.await(waitUntil);
                }
            }
        }
    }

    /**
     * The calls {@link #writing} announced are over, and what they took is counted: a give-back
     * of their keys that waited for them is due (on the sweeper's thread), and the keys' next
     * calls wait for it.
     */
    void written(List<LeaseEntry> marked) {
        boolean due = false;
        for (LeaseEntry entry : marked) {
            synchronized (entry) {
                if (--entry.writing == 0) {
                    due |= entry.deferred;
                    entry.notifyAll(); // a reclaim waiting for the key's calls
                }
            }
        }
        if (due) {
            returns.ask();
            if (closed) {
                // No sweeper any more: the close may have come before they waited.
                returns.due();
            }
        }
    }

    /**
     * Records what a store call answered for a leasing claim: the remaining units as a hint for
     * the next lease, and the new lease when it took {@code extra} units beside the request's.
     *
     * @return the answer for the request (the lease's units count as remaining for this key),
     *         and the lease installed, if any
     */
    Taken taken(Claim claim, long own, LeasePolicy policy, long extra, Verdicts.Answer answer, long start) {
        LeaseEntry entry = entry(new Slot(claim.rule(), claim.key()));
        synchronized (entry) {
            entry.storeRemaining = answer.remaining();
            if (answer.allowed() && answer.took()) {
                took(entry, claim.rule(), start, answer);
                consumed(entry, claim.rule(), start, own);
            }
            if (extra > 0 && answer.allowed() && answer.took() && !entry.removed) {
                Lease taken = Lease.taken(claim, own, policy, extra, answer, start, entry);
                entry.install(taken, now(), returns::ended);
                live.add(new Held(entry, taken));
                return new Taken(taken.served(start), taken);
            }
        }
        return new Taken(answer, null);
    }

    /**
     * What a store call answered a leasing claim.
     *
     * @param forRequest the answer for the request
     * @param lease      the lease the call took beside the request's units, or null
     */
    record Taken(Verdicts.Answer forRequest, Lease lease) {
    }

    /** How many keys this limiter keeps an account of: those seen within their lease time, or still owing. */
    int keys() {
        return entries.size();
    }

    /** Units this limiter holds for the key in a live lease (0 when none). */
    public long held(Rule rule, String key) {
        LeaseEntry entry = entries.get(new Slot(rule, key));
        if (entry == null) {
            return 0;
        }
        synchronized (entry) {
            return entry.held(now());
        }
    }

    /**
     * Ends the key's leases now and gives back what they did not use, on this thread: a request
     * Valkey refused finds there the units its own instance held back from it (the margin of a
     * bucket's lease above all), so that one instance is never refused for its own leases.
     *
     * @param mark {@link #landed()} before the refused call was sent
     * @return whether anything was given back since the call was sent, so that asking again may
     *         be answered otherwise
     */
    boolean reclaim(Claim claim, long mark) {
        LeaseEntry entry = entries.get(new Slot(claim.rule(), claim.key()));
        List<Lease> ended = new ArrayList<>(2);
        LeasePolicy policy = policy(claim);
        if (entry != null) {
            synchronized (entry) {
                // Other calls of the key on their way are waited for (at most its lease time): its
                // give-back waits for them (see writing), and asking again must find it landed.
                long waitUntil = System.nanoTime() + (policy == null ? 0 : policy.time().toNanos());
                while (entry.writing > 0 && !closed && entry.await(waitUntil)) {
                    // looks again
                }
                entry.drainTo(ended);
                ended.forEach(returns::ended);
            }
        }
        // Also what leases ended before gave back, or are giving back now: waited for, so that
        // asking Valkey again finds it there; and what landed since the refused call was sent.
        boolean due = returns.due();
        return due || !ended.isEmpty() || returns.landed() != mark;
    }

    /**
     * A mark of the give-backs landed so far, taken before a store call: {@link #reclaim} then
     * tells whether any landed since.
     */
    long landed() {
        return returns.landed();
    }

    /** A take of this instance wrote the key's debt (buckets only; see {@link LeaseEntry#generation}). */
    private static void took(LeaseEntry entry, Rule rule, long at, Verdicts.Answer answer) {
        if (rule.algorithm() != Algorithm.FIXED_WINDOW) {
            entry.generation(answer.undo().which(), at, rule.limit());
        }
    }

    /** Units this instance admitted for a key, for its simulation (buckets only). */
    private static void consumed(LeaseEntry entry, Rule rule, long at, long units) {
        if (rule.algorithm() != Algorithm.FIXED_WINDOW && units > 0) {
            entry.consumed(at, units, rule.limit(), rule.window().toMillis());
        }
    }

    private static void unconsumed(LeaseEntry entry, Rule rule, long at, long units, long since) {
        if (rule.algorithm() != Algorithm.FIXED_WINDOW && units > 0) {
            entry.unconsumed(at, units, rule.limit(), rule.window().toMillis(), since);
        }
    }

    /**
     * The request whose store call took units of a leasing rule gives them back apart (another
     * layer refused it): its lease, if the same call took one, no longer counts them as admitted.
     *
     * @param lease the lease the call took, or null
     * @param at    when the call was sent: when the units were counted as admitted
     * @return false when that lease has ended counting them: they must then stay counted
     */
    boolean disown(Claim claim, long own, Lease lease, long at) {
        LeaseEntry entry = lease != null ? lease.entry : entries.get(new Slot(claim.rule(), claim.key()));
        if (entry == null) {
            return true; // forgotten: no simulation left to count them
        }
        synchronized (entry) {
            // Kept counted by the lease's give-back, they stay: else their refund, sent next, and
            // its account here (returned) go ahead.
            return lease == null || lease.disown();
        }
    }

    /**
     * A reservation, which never uses a lease, took units of a leasing rule at {@code at}: this
     * instance's simulation of the key counts them, as it counts every unit this instance takes.
     */
    void reserved(Claim claim, Verdicts.Answer answer, long at) {
        if (policy(claim) == null) {
            return;
        }
        LeaseEntry entry = entry(new Slot(claim.rule(), claim.key()));
        synchronized (entry) {
            took(entry, claim.rule(), at, answer);
            consumed(entry, claim.rule(), at, claim.cost());
        }
    }

    /**
     * A refund made alike with leases and without (a reservation cancelled, a layer's units given
     * back after another refused) took {@code ticks} back from the claim's key in the store: this
     * instance's simulation of the key gives back as much, no more (the rest the store kept for
     * refill, as the bucket without leases does).
     */
    void returned(Claim claim, long ticks) {
        LeaseEntry entry = policy(claim) == null || ticks <= 0 ? null : entries.get(new Slot(claim.rule(), claim.key()));
        if (entry != null && claim.rule().algorithm() != Algorithm.FIXED_WINDOW) {
            synchronized (entry) {
                entry.returned(now(), ticks, claim.rule().limit());
            }
        }
    }

    /**
     * Gives back, on this thread, what ended leases hold: after a request's units went back (its
     * answer then describes the key after them).
     */
    void flush() {
        returns.due();
    }

    /**
     * Gives back, on this thread, what ended leases hold when one of them is of the keys of these
     * leases and not yet picked up by a give-back (or is being picked up: this waits until it
     * landed): a request that ran its key's lease out so makes the key's next answer count the
     * lease's margin. Without such a lease it returns at once; behind a give-back of other keys on
     * its way it waits no longer than the longest of these leases' times (a stalled store), and
     * then leaves the lease to the sweeper.
     */
    void flushEnded(List<Lease> own) {
        long patience = 0;
        for (Lease lease : own) {
            synchronized (lease.entry) {
                if (lease.entry.unpicked > 0) {
                    patience = Math.max(patience, Math.max(1, leaseTime(lease.take.rule())) * 1_000_000L);
                }
            }
        }
        if (patience > 0) {
            returns.dueWithin(patience);
        }
    }

    /** Gives back what the ended leases did not use as soon as the sweeper's thread is free. */
    private void giveBackSoon() {
        if (sweeper != null) {
            LeaseSweeper.now(sweeper, returns::due);
        }
    }

    /** Forgets the key's lease without giving anything back: its state was reset. */
    public void forget(Rule rule, String key) {
        entries.keySet().removeIf(slot -> slot.key().equals(key) && slot.rule().name().equals(rule.name())
                && slot.rule().algorithm() == rule.algorithm());
    }

    /**
     * Ends leases whose time is up or that have run out, gives back what they did not use, and
     * drops keys idle for longer than their lease time.
     */
    void sweep() {
        long now = now();
        // Only the live leases: far fewer than the keys seen, most of which never get one.
        for (Iterator<Held> held = live.iterator(); held.hasNext(); ) {
            Held each = held.next();
            synchronized (each.entry()) {
                if (!each.entry().holds(each.lease())) {
                    held.remove(); // replaced (and handed back) or forgotten meanwhile
                } else if (!each.lease().live(now) || each.lease().left == 0) {
                    // Over (a bucket's margin goes back once a lease has run out, see Lease). The
                    // next lease: as many units as this one served.
                    each.entry().demand = each.lease().size - each.lease().left;
                    each.entry().drop(each.lease());
                    returns.ended(each.lease());
                    held.remove();
                }
            }
        }
        if (now - lastIdleScan >= idleScanMillis) {
            lastIdleScan = now;
            // Each key made before this scan, once; those kept go to the back for the next scan.
            for (int n = madeCount.get(); n > 0; n--) {
                Slot slot = made.poll();
                if (slot == null) {
                    break;
                }
                LeaseEntry entry = entries.get(slot);
                if (entry == null) {
                    madeCount.decrementAndGet();
                    continue;
                }
                synchronized (entry) {
                    // Kept while its simulation holds a debt: a new one would start from a full
                    // bucket, and charge give-backs refill the key did not lose. Kept too while a
                    // lease ended and not yet given back, or a call, goes by it (busy): the
                    // give-back would read a simulation that misses what the key's calls took
                    // meanwhile, and not hold back those calls until it landed (LeaseReturner#all).
                    Rule rule = slot.rule();
                    if (entry.lease == null && entry.next == null && !entry.busy()
                            && now - entry.lastSeen > leaseTime(rule)
                            && (rule.algorithm() == Algorithm.FIXED_WINDOW || entry.debtAt(now, rule.limit()) == 0)) {
                        entry.removed = true;
                        entries.remove(slot, entry);
                        madeCount.decrementAndGet();
                    } else {
                        made.add(slot);
                    }
                }
            }
        }
        returns.due();
    }

    /** The key's entry, made now if it has none. */
    private LeaseEntry entry(Slot slot) {
        LeaseEntry entry = entries.get(slot);
        if (entry != null) {
            return entry;
        }
        LeaseEntry made = new LeaseEntry();
        entry = entries.putIfAbsent(slot, made);
        if (entry != null) {
            return entry;
        }
        madeCount.incrementAndGet();
        this.made.add(slot);
        return made;
    }

    private long leaseTime(Rule rule) {
        LeasePolicy policy = policies.get(rule.name());
        return policy == null ? 0 : policy.time().toMillis();
    }

    /** Stops the sweeper and gives back every lease's unused units. */
    @Override
    public void close() {
        if (sweeper == null) {
            return;
        }
        closed = true;
        sweeper.shutdownNow();
        // The leases taken by calls on their way go back with the others.
        inFlight.awaitNone(5_000); // bounded: close must end even with Valkey stalled
        List<Lease> all = new ArrayList<>();
        for (LeaseEntry entry : entries.values()) {
            synchronized (entry) {
                entry.drainTo(all);
                entry.removed = true;
            }
        }
        entries.clear();
        made.clear();
        madeCount.set(0);
        returns.all(all, true);
    }
}
