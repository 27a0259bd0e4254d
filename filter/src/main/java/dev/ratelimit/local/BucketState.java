package dev.ratelimit.local;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

/**
 * The in-process twin of {@code bucket.lua}, the bucket the token bucket and GCRA both are: the
 * debt (units missing from a full bucket) at the last write, in ticks of the rule that wrote it,
 * so refilling {@code limit} units per window adds back exactly {@code limit} ticks per ms. The
 * Lua files store it two ways (a debt, a theoretical arrival time); in memory one is enough.
 */
final class BucketState implements KeyState {

    private boolean stored;
    private long debt;
    private long writtenAt;
    private long writerWindow;
    private long writerLimit;
    /** The call that started the debt (see {@link BucketDebt#keptGeneration}). */
    private long generation;
    /** The stretch of refill refunds charged ({@link BucketDebt#refundable}); 0, 0: none since the last take. */
    private long chargedFrom;
    private long chargedTo;

    @Override
    public Verdicts.Answer take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected,
                        long call) {
        long window = rule.window().toMillis();
        long limit = rule.limit();
        long capacity = rule.burst() * window;
        long need = cost * window;

        BucketDebt read = stored
                ? BucketDebt.read(debt, writtenAt, writerWindow, writerLimit, now, window, limit, rule.burst())
                : BucketDebt.NONE;
        long d = read.debt();
        long expires = read.expires();
        boolean kept = stored && BucketDebt.keptGeneration(d, debt, writerWindow, writerLimit, window, limit,
                rule.burst());

        // Within max delay of its slot, a take is allowed now for that slot (see the Lua file).
        long reach = capacity + rule.maxDelay().toMillis() * limit;
        boolean allowed = d + need <= reach;
        // Held for a slot to come: the debt the take leaves, from which its slot follows.
        long queue = allowed && d + need > capacity ? d + need : 0;
        boolean consume = allowed ? consumeIfAllowed : consumeIfRejected;
        // A held take names the time it wrote, not the call's (see the Lua file's finish).
        long takenAt = now;
        if (consume) {
            long at = stored ? BucketDebt.writeTime(now, writtenAt) : now;
            takenAt = queue > 0 ? at : now;
            // A delayed take goes into debt; a counted rejection may overdraw the bucket by at
            // most one full bucket, never below the debt read (see the Lua file).
            d = queue > 0 ? d + need : Math.max(d, Math.min(d + need, 2 * capacity));
            expires = at + KeyState.ceilDiv(d, limit);
            stored = true;
            debt = d;
            writtenAt = at;
            writerWindow = window;
            writerLimit = limit;
            generation = kept ? generation : call;
            chargedFrom = 0;
            chargedTo = 0;
        }

        long remaining = d < capacity ? (capacity - d) / window : 0;
        long resetAfter = d > 0 ? Math.min(KeyState.ceilDiv(d, limit), expires - now) : 0;
        long next = d > 0 ? BucketDebt.waitFor(remaining + 1, d, window, capacity, limit, expires, now) : 0;
        long wait = d + need > reach ? BucketDebt.waitFor(cost, d, window, reach, limit, expires, now) : 0;
        return new Verdicts.Answer(allowed, remaining, resetAfter, next, wait, Undo.of(consume, takenAt, generation),
                Verdicts.Answer.slotMillis(rule, queue), queue);
    }

    @Override
    public boolean refund(long now, Rule rule, long cost, Verdicts.Answer taken) {
        Undo undo = taken.undo();
        long takenAt = undo.where();
        long chargedGeneration = undo.which();
        long window = rule.window().toMillis();
        if (!stored || writerWindow != window || writerLimit != rule.limit() || generation != chargedGeneration) {
            // Written since by an edited rule: its refill since may have been faster; or a debt
            // started since (a reset): the units are not in it (see the Lua file).
            return false;
        }
        long d = BucketDebt.read(debt, writtenAt, writerWindow, writerLimit, now, window, rule.limit(), rule.burst())
                .debt();
        long at = BucketDebt.writeTime(now, writtenAt);
        if (d > rule.burst() * window) {
            // Requests are held for slots to come: only the last one gives back (see the Lua file).
            // At the key's time, as its take named (see the Lua file's refund).
            if (!BucketDebt.heldBack(d, at, rule.limit(), cost * window, takenAt, taken.queue())) {
                return false;
            }
            debt = d - cost * window;
            writtenAt = at;
            return true;
        }
        if (taken.queue() > 0) {
            // Held for a slot: the bucket without it could not be full before the ms before (see
            // the Lua file).
            takenAt += Math.max(0, Verdicts.Answer.slotMillis(rule, taken.queue()) - 1);
        }
        BucketDebt.Refunded refunded = BucketDebt.refundable(d, at, rule.limit(), window, cost, takenAt, chargedFrom,
                chargedTo);
        if (refunded.ticks() == 0) {
            return false;
        }
        d -= refunded.ticks();
        chargedFrom = refunded.from();
        chargedTo = refunded.to();
        stored = d > 0;
        debt = d;
        writtenAt = at;
        writerWindow = window;
        writerLimit = rule.limit();
        return true;
    }

    @Override
    public long expiresAt() {
        return stored ? writtenAt + KeyState.ceilDiv(debt, writerLimit) : Long.MIN_VALUE;
    }
}
