package dev.ratelimit.valkey.script;

import dev.ratelimit.Claim;
import dev.ratelimit.internal.Verdicts;

/**
 * Units to give back to the store, one claim's, as {@code refund.lua} takes them: the rule and
 * key, the units, the acquiring call's undo values, and for a bucket what the caller knows of
 * the debt the bucket would have had without the units (see {@code refundable} in
 * {@code bucket.lua}).
 *
 * @param claim    the rule as it was when the units were taken, the key, and the units to give back
 * @param taken    the acquiring call's answer: its undo values say what it wrote
 * @param floor    the least refill a bucket lost without the units that only the caller can work
 *                 out, in ticks, for a local lease (see {@code lease.Lease}); -1 when the caller knows
 *                 nothing of it (a reservation)
 * @param headroom the least debt a bucket would have held without the units, in ticks, for a
 *                 local lease; for a give-back of a request held for a slot (floor -1), the debt
 *                 its take left; 0 otherwise
 * @param lend     the units the lease's take lent, which leave the bucket's account of its leases
 *                 (see {@link Lending}); 0 but for a lease's give-back
 */
public record Refund(Claim claim, Verdicts.Answer taken, long floor, long headroom, long lend) {

    /**
     * A reservation's refund: all it took, the bucket without it assumed full since (see
     * {@code refundable} in {@code bucket.lua}); for a request held for a slot to come, the
     * debt its take left (its queue, as headroom), by which the store knows whether it is still
     * the last one held (see {@code held_back}).
     *
     * @param claim the claim as taken
     * @param taken the acquiring call's answer
     * @return the refund
     */
    public static Refund of(Claim claim, Verdicts.Answer taken) {
        return new Refund(claim, taken, -1, taken.queue(), 0);
    }
}
