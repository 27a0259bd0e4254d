package dev.ratelimit.valkey.script;

import dev.ratelimit.Claim;
import dev.ratelimit.internal.Charges;

/**
 * Units of work already done to count on a claim's key whatever it has left: the part of a cost,
 * known after the response, above what the request's admission took ({@code dispatcher.lua}'s
 * mode 3). Unlike a {@link Claim}'s cost, it may exceed the rule's capacity: the key goes into
 * debt, up to the bound the script keeps ({@link Charges#bound}).
 *
 * @param claim the claim the request was admitted by (its rule and key)
 * @param units the units to count, at least 1
 */
public record Charge(Claim claim, long units) {

    /**
     * A charge of {@code units} on the claim's key, capped at the debt bound.
     *
     * @param claim the claim the request was admitted by
     * @param units the units to count, at least 1
     * @return the charge
     */
    public static Charge of(Claim claim, long units) {
        if (units < 1) {
            throw new IllegalArgumentException("a charge takes at least 1 unit, not " + units);
        }
        return new Charge(claim, Math.min(units, Charges.bound(claim)));
    }
}
