package dev.ratelimit.local;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

/**
 * The in-process twin of {@code gcra.lua}: the theoretical arrival time, kept in ticks of
 * {@code 1 / limit} ms so one unit's emission interval is exactly {@code window} ticks, with
 * the time and rule of the write so that an edited rule reads it in its own units.
 */
final class GcraState implements KeyState {

    private boolean stored;
    /** The theoretical arrival time: {@code tatMillis + tatFraction / writerLimit} ms. */
    private long tatMillis;
    private long tatFraction;
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
        long tolerance = rule.burst() * window;
        long need = cost * window;

        long storedDebt = (tatMillis - writtenAt) * writerLimit + tatFraction;
        BucketDebt read = stored
                ? BucketDebt.read(storedDebt, writtenAt, writerWindow, writerLimit, now, window, limit, rule.burst())
                : BucketDebt.NONE;
        long d = read.debt();
        long expires = read.expires();
        boolean kept = stored && BucketDebt.keptGeneration(d, storedDebt, writerWindow, writerLimit, window, limit,
                rule.burst());

        boolean allowed = d + need <= tolerance;
        boolean consume = allowed ? consumeIfAllowed : consumeIfRejected;
        if (consume) {
            long at = stored ? BucketDebt.writeTime(now, writtenAt) : now;
            d = Math.min(d + need, 2 * tolerance);
            expires = at + KeyState.ceilDiv(d, limit);
            stored = true;
            tatMillis = at + d / limit;
            tatFraction = d % limit;
            writtenAt = at;
            writerWindow = window;
            writerLimit = limit;
            generation = kept ? generation : call;
            chargedFrom = 0;
            chargedTo = 0;
        }

        long remaining = d < tolerance ? (tolerance - d) / window : 0;
        long resetAfter = d > 0 ? Math.min(KeyState.ceilDiv(d, limit), expires - now) : 0;
        long next = d > 0 ? BucketDebt.waitFor(remaining + 1, d, window, tolerance, limit, expires, now) : 0;
        long wait = d + need > tolerance ? BucketDebt.waitFor(cost, d, window, tolerance, limit, expires, now) : 0;
        return new Verdicts.Answer(allowed, remaining, resetAfter, next, wait, Undo.of(consume, now, generation));
    }

    @Override
    public boolean refund(long now, Rule rule, long cost, Undo undo) {
        long takenAt = undo.where();
        long chargedGeneration = undo.which();
        long window = rule.window().toMillis();
        if (!stored || writerWindow != window || writerLimit != rule.limit() || generation != chargedGeneration) {
            // Written since by an edited rule: its refill since may have been faster; or a debt
            // started since (a reset): the units are not in it (see the Lua file).
            return false;
        }
        long limit = rule.limit();
        long d = BucketDebt.read((tatMillis - writtenAt) * writerLimit + tatFraction, writtenAt, writerWindow,
                writerLimit, now, window, limit, rule.burst()).debt();
        long at = BucketDebt.writeTime(now, writtenAt);
        BucketDebt.Refunded refunded = BucketDebt.refundable(d, at, limit, window, cost, takenAt, chargedFrom,
                chargedTo);
        if (refunded.ticks() == 0) {
            return false;
        }
        // The TAT moves back by what of the cost's emission intervals had to be charged, never before now.
        d -= refunded.ticks();
        chargedFrom = refunded.from();
        chargedTo = refunded.to();
        stored = d > 0;
        tatMillis = at + d / limit;
        tatFraction = d % limit;
        writtenAt = at;
        writerWindow = window;
        writerLimit = limit;
        return true;
    }

    @Override
    public long expiresAt() {
        return stored ? tatMillis + (tatFraction > 0 ? 1 : 0) : Long.MIN_VALUE;
    }
}
