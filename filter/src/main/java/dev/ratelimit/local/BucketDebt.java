package dev.ratelimit.local;

import dev.ratelimit.internal.Charges;

/**
 * The token bucket's and GCRA's shared model, the twin of {@code bucket_debt} in
 * {@code bucket.lua}: a debt (units taken and not yet refilled) recorded at a time, in ticks
 * of the rule that wrote it (one unit = its window in ticks, its limit in ticks refilled per
 * ms), read by the rule as it is now.
 *
 * @param debt    the debt now, in the current rule's ticks
 * @param expires when the stored state is forgotten, epoch ms; {@link Long#MIN_VALUE} when
 *                there is none
 */
record BucketDebt(long debt, long expires) {

    /** No stored state: a full bucket. */
    static final BucketDebt NONE = new BucketDebt(0, Long.MIN_VALUE);

    /**
     * Reads a stored debt.
     *
     * <p>A rule edited since the write reads the same whole units owed (rounded up), at most two
     * full buckets of its own, refilled at its own rate from the time of the write; the state is
     * forgotten when the rule that wrote it said the bucket would be full again.
     *
     * @param d      the stored debt, in the writer's ticks
     * @param ts     when it was written, epoch ms
     * @param w      the writer's window in ms (ticks per unit)
     * @param l      the writer's limit (ticks refilled per ms)
     * @param now    the time, epoch ms
     * @param window the current rule's window in ms
     * @param limit  the current rule's limit
     * @param burst  the current rule's burst
     * @return the debt now and the state's expiry
     */
    static BucketDebt read(long d, long ts, long w, long l, long now, long window, long limit, long burst) {
        long expires = ts + KeyState.ceilDiv(d, l);
        if (now >= expires) {
            return NONE;
        }
        // Written by this very rule: a charge's or a queue's debt of up to DEBT_BUCKETS buckets;
        // by another (an edit, a plan), at most two of this rule's buckets (see bucket.lua).
        long bound = w == window && l == limit ? Charges.DEBT_BUCKETS : 2;
        if (w != window) {
            d = Math.min(KeyState.ceilDiv(d, w), bound * burst) * window;
        }
        d = Math.min(d, bound * burst * window);
        // A clock that went backwards refills nothing rather than draining the bucket.
        long elapsed = Math.max(0, now - ts);
        if (elapsed >= KeyState.ceilDiv(d, limit)) {
            return new BucketDebt(0, expires);
        }
        return new BucketDebt(d - elapsed * limit, expires);
    }

    /**
     * The time a write stamps on a bucket's state, the twin of {@code write_time} in
     * {@code bucket.lua}: never before the time it read there. A call whose clock is behind the
     * state's reads the debt with no refill; written back at its earlier time, the next read would
     * refill the stretch in between a second time.
     *
     * @param now the call's clock
     * @param ts  the state's time
     * @return the later of the two
     */
    static long writeTime(long now, long ts) {
        return Math.max(now, ts);
    }

    /**
     * Whether a write keeps the state's generation, the twin of {@code kept_generation} in
     * {@code bucket.lua}: when the debt read is the stored debt whole, by the rule that wrote
     * it (same window and limit, nothing cut by a burst lowered since) and not yet refilled.
     * Otherwise the write starts a new generation, and refunds of the old one give nothing back.
     *
     * @param d      the debt now, as read
     * @param stored the stored debt, in the writer's ticks
     * @param w      the writer's window in ms
     * @param l      the writer's limit
     * @param window the current rule's window in ms
     * @param limit  the current rule's limit
     * @param burst  the current rule's burst
     * @return whether the generation goes on
     */
    static boolean keptGeneration(long d, long stored, long w, long l, long window, long limit, long burst) {
        return d > 0 && w == window && l == limit && stored <= Charges.DEBT_BUCKETS * burst * window;
    }

    /**
     * What a refund gives back: ticks off the debt, and the state's new marks, the stretch of its
     * refill that refunds charged.
     *
     * @param ticks the ticks to take off the debt, 0 when nothing is owed any more
     * @param from  where the stretch starts, epoch ms (0 with none)
     * @param to    where it ends (0 with none)
     */
    record Refunded(long ticks, long from, long to) {
    }

    /**
     * Whether a give-back may take its units out of a bucket whose debt is beyond its burst (the
     * twin of {@code held_back} in {@code bucket.lua}, whose comment says why): only the last
     * request held for a slot, whose take's debt is still exactly there, refilled since.
     *
     * @param d       the debt now, ticks
     * @param now     the key's time, epoch ms: never before its last write ({@link #writeTime})
     * @param limit   ticks refilled per ms
     * @param need    the units' ticks
     * @param takenAt when they were taken
     * @param queue   the debt their take left (0: not held)
     * @return whether all of them go back
     */
    static boolean heldBack(long d, long now, long limit, long need, long takenAt, long queue) {
        return queue > 0 && d == queue - Math.max(0, now - takenAt) * limit && d >= need;
    }

    /**
     * A reservation's give-back, the twin of {@code refundable} in {@code bucket.lua} (whose
     * comment says why): the units a write took, less the refill since it that a bucket without
     * them would have lost, taken as full from the write on but for the stretch earlier refunds
     * charged already, and never more than the debt now.
     *
     * @param d       the debt now, in the rule's ticks
     * @param now     the key's time, epoch ms: never before its last write ({@link #writeTime})
     * @param limit   the rule's limit (ticks refilled per ms)
     * @param window  the rule's window in ms (ticks per unit)
     * @param cost    the units the write took
     * @param takenAt when the write was, epoch ms
     * @param from    where the stretch charged starts (0 with none)
     * @param to      where it ends (0 with none)
     * @return the ticks and the new marks
     */
    static Refunded refundable(long d, long now, long limit, long window, long cost, long takenAt, long from, long to) {
        long owed = cost * window;
        long start = Math.min(takenAt, now);
        boolean apart = to == 0 || start > to;
        long spans = apart ? now - start : Math.max(0, Math.min(from, now) - start) + Math.max(0, now - Math.max(to, start));
        long lost = spans * limit;
        long ticks = Math.max(0, Math.min(owed - lost, d));
        if (lost > owed) {
            return new Refunded(ticks, from, to);
        }
        return apart ? new Refunded(ticks, start, now) : new Refunded(ticks, Math.min(start, from), Math.max(to, now));
    }

    /**
     * The time until a debt lets {@code c} units in: it must fall to {@code capacity - c × window}
     * ticks, at {@code limit} ticks per ms; never past the moment the state is forgotten. The
     * Lua files' {@code wait_for}.
     *
     * @param c        the units, more than the debt lets in now
     * @param d        the debt now, in the rule's ticks
     * @param window   the rule's window in ms (ticks per unit)
     * @param capacity the bucket's capacity in ticks ({@code burst × window})
     * @param limit    the rule's limit (ticks refilled per ms)
     * @param expires  when the state is forgotten, epoch ms
     * @param now      the time, epoch ms
     * @return the ms to wait, at least 1
     */
    static long waitFor(long c, long d, long window, long capacity, long limit, long expires, long now) {
        return Math.min(KeyState.ceilDiv(d + c * window - capacity, limit), expires - now);
    }
}
