package dev.ratelimit.it.checker;

/**
 * Units one call took, may have taken, or recorded, for one rule and key: what the ledger
 * counts. Mutable only in what later events learn about it: its refund, and for a lease that
 * may be held with no holder, when it must be free again.
 */
final class Unit {

    /** How sure the history is that the units count. */
    enum Kind {
        /** The caller was told the request was allowed and this rule allowed: counted. */
        TAKEN,
        /** A count-rejected rule recorded a rejected attempt: counted, but not an allowed unit. */
        ATTEMPT,
        /**
         * Maybe counted: the call to the store threw after it may have run (a lost reply), or a
         * refund owed was dropped.
         */
        POSSIBLE
    }

    /** What became of the units later. */
    enum Refund {
        /** Nothing: they still count (or have expired on their own). */
        NONE,
        /** The store said it gave them back (for a lease: released). */
        GIVEN,
        /** A refund or release was sent and threw: it may or may not have happened. */
        MAYBE
    }

    final long op;
    /** The earliest time the store can have counted them (the call's start). */
    final long at;
    /**
     * The latest: {@code at} on the client clock, whose time the call carries; on the server
     * clock the time the call returned, or for a lost reply the time the store answered again
     * (it ran before that), {@code Long.MAX_VALUE} until then. The lower bound reads a unit at
     * times it certainly lies within, the upper bound at any it may.
     */
    long latest;
    final long cost;
    final Kind kind;
    /** The rule's window when taken: for a lease, its timeout. */
    final long window;
    /** The ledger's epochs when taken (see {@link Ledger}). */
    final int safetyEpoch;
    final int wipe;
    /** The op of the reservation that took them, or -1 when nothing can give them back. */
    final long reservation;

    /**
     * For a possible unit of a rule that holds requests for slots: how much later than its call
     * it may pass (the rule's max delay), which the upper bound reads it at the latest; 0 otherwise.
     */
    long hold;

    Refund refund = Refund.NONE;
    long refundAt;
    /**
     * The units that still count after a settlement by a cost known after the work gave back
     * part of them, exactly (a window's or a log's refund the store said it made); {@code cost}
     * until then. A bucket gives back part of that part: its upper bound reads {@code cost}.
     */
    long kept;
    /**
     * Work charged after it was done ({@code commit(actualCost)} above the reserved cost): counted
     * in its window or debt, above the limit by design, but never an admission.
     */
    boolean charge;

    /**
     * For a lease that may be held with no holder (a lost reply, a failed release): the op
     * after which it must be free again, once Valkey has answered and the limiter has had its
     * chances to release it. {@code Long.MAX_VALUE} until then.
     */
    long freeAfterOp = Long.MAX_VALUE;
    /** Whether this is such a lease. */
    boolean lost;
    /** The op at which it became lost. */
    long lostOp;
    /** The limiter instance that lost it: only that one remembers it, and releases it. */
    int lostInstance;
    /** Real ms of the first store answer after it was lost, or -1. */
    long answeredReal = -1;
    /** Releasing chances counted so far (see {@link Invariants}), and the real ms of the last. */
    int chances;
    long lastChanceReal;

    Unit(long op, long at, long cost, Kind kind, long window, int safetyEpoch, int wipe, long reservation) {
        this.op = op;
        this.at = at;
        this.latest = at;
        this.cost = cost;
        this.kept = cost;
        this.kind = kind;
        this.window = window;
        this.safetyEpoch = safetyEpoch;
        this.wipe = wipe;
        this.reservation = reservation;
    }

    @Override
    public String toString() {
        return kind + "×" + cost + "@" + at + (latest == at ? "" : ".." + latest) + " op " + op + (refund == Refund.NONE ? "" : " " + refund + "@" + refundAt);
    }
}
