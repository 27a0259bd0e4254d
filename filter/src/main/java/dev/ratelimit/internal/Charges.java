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
     * What a settlement by actual cost asks of one claim a reservation took: the one reading of
     * {@link dev.ratelimit.Reservation#commit(java.util.function.ToLongFunction)} every limiter
     * applies.
     *
     * @param kind  what to do
     * @param units the units to give back or to charge (0 to keep or release)
     */
    public record Adjustment(Kind kind, long units) {

        /** What a claim's settlement does. */
        public enum Kind {
            /** Keep the units as reserved: no cost, the same cost, or more than a rule that cannot owe. */
            KEEP,
            /** Release a concurrency rule's permit (its units whole): the work is over. */
            RELEASE,
            /** Give back the {@code units} the work did not use. */
            GIVE_BACK,
            /** Charge the {@code units} the work used beyond the reservation (at most the debt bound). */
            CHARGE
        }

        /**
         * The adjustment of a claim by the work's actual cost.
         *
         * @param claim  the claim as reserved
         * @param actual the actual cost; negative: none reported
         * @return the adjustment
         */
        public static Adjustment of(Claim claim, long actual) {
            if (claim.rule().algorithm().isConcurrency()) {
                return new Adjustment(Kind.RELEASE, 0);
            }
            if (actual < 0 || actual == claim.cost()) {
                return new Adjustment(Kind.KEEP, 0);
            }
            if (actual < claim.cost()) {
                return new Adjustment(Kind.GIVE_BACK, claim.cost() - actual);
            }
            return supports(claim.rule().algorithm())
                    ? new Adjustment(Kind.CHARGE, Math.min(actual - claim.cost(), bound(claim)))
                    : new Adjustment(Kind.KEEP, 0);
        }
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
