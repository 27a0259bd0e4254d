package dev.ratelimit.valkey.script;

import dev.ratelimit.Claim;

import java.util.Map;

/**
 * How many units of each claim of one store call a local lease takes beside the request's own:
 * sent with the call ({@code lend} in {@code dispatcher.lua}), so that the bucket keeps the
 * account of its leases (see {@code lease_pool} in {@code bucket.lua}). By rule name: a request
 * names each rule once.
 *
 * @param byRule the lease units of each rule that asks for a lease
 */
public record Lending(Map<String, Long> byRule) {

    /** A call that takes no lease. */
    public static final Lending NONE = new Lending(Map.of());

    /**
     * Lending by rule name.
     *
     * @param byRule the lease units of each rule that asks for a lease
     */
    public Lending {
        byRule = Map.copyOf(byRule);
    }

    /** The lease units the claim takes beside its request's own: 0 when it asks for no lease. */
    long of(Claim claim) {
        return byRule.getOrDefault(claim.rule().name(), 0L);
    }
}
