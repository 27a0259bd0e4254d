package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.valkey.script.Refund;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Leases that no longer serve, until what they did not use goes back to the store (see
 * {@link Lease}): at once, in one refund call for all of them then ended, on the sweeper's thread
 * or on a request's own that needs it there. A give-back Valkey cannot take is dropped, as
 * refunds are: the units stay counted until their window ends or the bucket refills, never
 * granted twice.
 */
final class LeaseReturner {

    private static final System.Logger LOG = System.getLogger("dev.ratelimit.valkey.ValkeyRateLimiter");

    /** Gives units back to the store: one refund call for all of them (one per slot group), sent at {@code now}. */
    @FunctionalInterface
    public interface GiveBack {
        void giveBack(List<Refund> refunds, long now);
    }

    private final GiveBack store;
    /** The lease clock: read as a give-back is worked out, and the give-back sent at that time. */
    private final LongSupplier clock;
    /** Asks for the ended leases to be given back soon, off the caller's thread. */
    private final Runnable soon;
    private final ConcurrentLinkedQueue<Lease> ended = new ConcurrentLinkedQueue<>();
    /** Give-backs made: a caller that waited for one can tell whether any landed meanwhile. */
    private final AtomicLong givenBack = new AtomicLong();
    /** Whether a give-back is asked for and not yet begun: one at a time, however many leases end. */
    private final AtomicBoolean asked = new AtomicBoolean();
    /**
     * Ended leases whose give-back waits for a call of this instance on their key (see
     * {@link #all}), with the {@link System#nanoTime()} they first waited at; guarded by {@link #giving}.
     */
    private final Map<Lease, Long> waiting = new IdentityHashMap<>();
    /** Held by the give-back being worked out and sent: one at a time; guards {@link #waiting}. */
    private final ReentrantLock giving = new ReentrantLock();

    LeaseReturner(GiveBack store, LongSupplier clock, Runnable soon) {
        this.store = store;
        this.clock = clock;
        this.soon = soon;
    }

    /**
     * A lease that stopped serving: no one takes from it any more; what it did not use goes back
     * soon. The caller holds the lease's entry.
     */
    void ended(Lease lease) {
        lease.entry.unpicked++;
        ended.add(lease);
        ask();
    }

    /**
     * Asks for a give-back soon, off the caller's thread: one kept waiting for its key's calls is
     * due (see {@link #all}).
     */
    void ask() {
        if (asked.compareAndSet(false, true)) {
            soon.run();
        }
    }

    /**
     * Gives back what the ended leases did not use, now, on the calling thread; one give-back
     * at a time, so that one asked for while another is on its way returns after it landed.
     *
     * @return whether any lease was given back, by this call or by one it waited for
     */
    boolean due() {
        // Cleared first: a lease ending from here on asks again, and is given back by this run or that one.
        asked.set(false);
        long before = givenBack.get();
        all(List.of(), false);
        return givenBack.get() != before;
    }

    /**
     * {@link #due}, unless a give-back on its way holds it up for longer than {@code nanos}: the
     * leases then go back with the next one (the sweeper's, asked for as they ended).
     */
    void dueWithin(long nanos) {
        try {
            if (!giving.tryLock(nanos, TimeUnit.NANOSECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            due();
        } finally {
            giving.unlock();
        }
    }

    /** How many give-backs have landed so far: a mark to tell later whether any landed since. */
    long landed() {
        return givenBack.get();
    }

    /**
     * Gives back what every ended lease and the given ones hold, due or not (the limiter closes:
     * {@code closing}, and then without waiting for the keys' calls on their way).
     *
     * <p>A give-back is worked out at the time this reads, from this instance's own use of the
     * key up to then (see {@link Lease}), and the store applies it at that time only if no later
     * write of the key landed before it: one that did (a request this instance sent meanwhile)
     * makes the store measure the refill up to that write as if this instance had taken nothing
     * since, and charge refill the bucket without the lease never lost, for good. So a lease's
     * give-back waits while a call of this instance on its key is on its way (from before it
     * reads its clock until what it took is counted, {@link LeaseEntry#writing}): that call
     * gives it back once over; and until it landed, the key's next calls wait for it
     * ({@link LeaseEntry#returning}). A give-back kept waiting longer than its lease's time goes
     * all the same: its key, written meanwhile, may then be charged more than it lost, never less.
     */
    void all(List<Lease> live, boolean closing) {
        giving.lock();
        try {
            allHeld(live, closing);
        } finally {
            giving.unlock();
        }
    }

    private void allHeld(List<Lease> live, boolean closing) {
        List<Lease> all = new ArrayList<>(live);
        all.addAll(waiting.keySet());
        Set<Lease> picked = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Lease lease; (lease = ended.poll()) != null; ) {
            all.add(lease);
            picked.add(lease);
        }
        long nanos = System.nanoTime();
        Map<LeaseEntry, List<Lease>> byKey = new IdentityHashMap<>();
        for (Lease lease : all) {
            waiting.putIfAbsent(lease, nanos);
            byKey.computeIfAbsent(lease.entry, entry -> new ArrayList<>(2)).add(lease);
        }
        List<Lease> due = new ArrayList<>(all.size());
        List<LeaseEntry> returning = new ArrayList<>();
        for (Map.Entry<LeaseEntry, List<Lease>> each : byKey.entrySet()) {
            LeaseEntry entry = each.getKey();
            boolean overdue = each.getValue().stream().anyMatch(lease ->
                    nanos - waiting.get(lease) > Math.max(1, lease.ends - lease.start) * 1_000_000L);
            synchronized (entry) {
                for (Lease lease : each.getValue()) {
                    if (picked.contains(lease)) {
                        entry.unpicked--;
                    }
                }
                if (!closing && entry.writing > 0 && !overdue) {
                    // No call of the key starts meanwhile; the last one over asks again (Leases#written).
                    entry.deferred = true;
                    continue;
                }
                entry.deferred = false;
                if (!entry.returning) {
                    entry.returning = true;
                    returning.add(entry);
                }
            }
            each.getValue().forEach(waiting::remove);
            due.addAll(each.getValue());
        }
        try {
            // Read once the keys' calls are over and no new one can start: what is worked out is
            // sent at this time, and lands before any later write of these keys by this instance.
            giveBack(due, clock.getAsLong());
        } finally {
            for (LeaseEntry entry : returning) {
                synchronized (entry) {
                    entry.returning = false;
                    entry.notifyAll(); // calls waiting to write the key (Leases#writing)
                }
            }
        }
    }

    private void giveBack(List<Lease> leases, long now) {
        List<Refund> refunds = new ArrayList<>();
        for (Lease lease : leases) {
            // A fixed window's lease whose window has ended has nothing left to give back to; one
            // cut to its window and closed before it ended still has (the window counts them).
            boolean windowEnded = lease.take.rule().algorithm() == Algorithm.FIXED_WINDOW
                    && now >= lease.start + lease.answer.resetMillis();
            Refund refund = lease.giveBack(now);
            if (refund != null && !windowEnded) {
                refunds.add(refund);
            }
        }
        if (refunds.isEmpty()) {
            return;
        }
        try {
            store.giveBack(refunds, now);
            givenBack.incrementAndGet();
        } catch (RateLimitException e) {
            LOG.log(System.Logger.Level.DEBUG, "unused leased units not given back: {0}", e.getMessage());
        }
    }
}
