package dev.ratelimit.internal;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;

/**
 * What every limiter of this library agrees on about charges, work counted after the fact (see
 * {@link dev.ratelimit.Reservation#commit(java.util.function.ToLongFunction)}): which algorithms
 * take them, and the most one key may owe.
 */
public final class Charges {

    /** How many full quotas of debt a key may owe in Valkey: {@code DEBT_BUCKETS} of {@code prelude.lua}. */
    public static final long DEBT_BUCKETS = 8;

    private Charges() {
    }

    /**
     * Whether a rule of this algorithm can be charged after the work: not a sliding log, whose
     * memory grows with every unit, nor a concurrency rule, which counts work in progress.
     *
     * @param algorithm the rule's algorithm
     * @return whether it takes charges
     */
    public static boolean supports(Algorithm algorithm) {
        return algorithm != Algorithm.SLIDING_LOG && !algorithm.isConcurrency();
    }

    /**
     * The most units one charge can count on the claim's key: the debt bound (more would be
     * dropped by the store anyway; capped before, every product stays exact).
     *
     * @param claim the claim the request was admitted by
     * @return the bound
     */
    public static long bound(Claim claim) {
        return DEBT_BUCKETS * claim.rule().capacity();
    }
}
