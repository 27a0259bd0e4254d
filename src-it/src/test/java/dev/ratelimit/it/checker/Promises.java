package dev.ratelimit.it.checker;

import dev.ratelimit.Decision;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The promise of the effective window (draft-11 §4.1 and §7: a client should not use more than
 * {@code r} units within {@code t}): once a decision says {@code r} units remain and more comes
 * in {@code t}, the rule allows no more than {@code r} units for that key, in that domain,
 * before {@code t} ends, whoever takes them. Only while nothing made room meanwhile: a refund or
 * release, an edit, a reset or wipe, a key's rule changed (all counted by
 * {@link Ledger#room()}), and never on a concurrency ledger that lost a lease (held by no one
 * until the limiter frees it, at a time the history cannot say). A full quota's {@code t} is a
 * convention (the rule's window), not a promise, so it is not checked.
 */
final class Promises {

    /** What one decision promised: no more than {@code remaining} units before {@code end}. */
    private static final class Promise {
        final long op;
        final long end;
        final long remaining;
        final int room;
        final Decision decision;
        long taken;

        Promise(long op, long end, long remaining, int room, Decision decision) {
            this.op = op;
            this.end = end;
            this.remaining = remaining;
            this.room = room;
            this.decision = decision;
        }
    }

    /** Open promises per ledger; few, since each ends within its rule's window. */
    private final Map<Ledger, List<Promise>> open = new IdentityHashMap<>();

    /**
     * Units allowed on a ledger: counted against every promise still open, made before them.
     *
     * @param ledger the rule and key, in the domain that decided
     * @param latest the latest time the units can have been taken
     * @param cost   how many
     * @return the promise this breaks, or null
     */
    Bounds.Finding taken(Ledger ledger, long latest, long cost) {
        List<Promise> promises = open.get(ledger);
        if (promises == null) {
            return null;
        }
        promises.removeIf(p -> p.room != ledger.room() || p.end <= latest);
        for (Promise promise : promises) {
            promise.taken += cost;
            if (promise.taken > promise.remaining) {
                promises.remove(promise);
                return new Bounds.Finding(ledger.current().algorithm().id()
                        + ": no more than r units within the effective window t",
                        "op " + promise.op + " said " + promise.remaining + " remaining until " + promise.end
                                + " (" + promise.decision + "), and " + promise.taken + " were allowed by " + latest,
                        promise.end - promise.decision.effectiveWindow().toMillis(), latest);
            }
        }
        return null;
    }

    /**
     * A decision's promise, from the earliest time it can have been made.
     *
     * @param ledger   the rule and key, in the domain that decided
     * @param op       the operation
     * @param earliest the earliest time of the decision
     * @param decision what it said
     * @param othersHold units other instances may hold in local leases and admit on top (LeaseSlack)
     */
    void promised(Ledger ledger, long op, long earliest, Decision decision, long othersHold) {
        long window = decision.effectiveWindow().toMillis();
        if (window <= 0 || decision.remaining() >= ledger.current().capacity() || ledger.lostLease()) {
            return;
        }
        open.computeIfAbsent(ledger, l -> new ArrayList<>())
                .add(new Promise(op, earliest + window, decision.remaining() + othersHold, ledger.room(), decision));
    }
}
