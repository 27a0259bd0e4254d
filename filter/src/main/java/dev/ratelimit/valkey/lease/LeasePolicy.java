package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.Objects;

/**
 * How one rule leases units: at most {@code size} units per lease, each lease ending
 * {@code time} after it was taken (a fixed window's lease also ends with its window).
 *
 * @param size the most units one lease takes ahead (at least 1)
 * @param time how long a lease serves before what is left goes back
 */
public record LeasePolicy(long size, Duration time) {

    /** The algorithms whose leases keep the rule's bound exactly (see {@link #margin}). */
    public static boolean supports(Algorithm algorithm) {
        return algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.TOKEN_BUCKET
                || algorithm == Algorithm.GCRA;
    }

    /**
     * A policy.
     *
     * @throws IllegalArgumentException naming the bad size or time
     */
    public LeasePolicy {
        Objects.requireNonNull(time, "time");
        if (size < 1 || time.toMillis() < 1) {
            throw new IllegalArgumentException("a lease needs a size of at least 1 and a time of at least 1 ms: "
                    + size + ", " + time);
        }
    }

    /**
     * The units charged beside a lease of a bucket (token bucket, GCRA): the refill during the
     * lease, rounded up. A unit taken at {@code c} and admitted at {@code u <= c + time} is one the
     * bucket could have given at {@code u} only if the bucket's refill between them was not
     * spent elsewhere, which it could be while the bucket, had the unit not been taken, would
     * have been full (refill past a full bucket is lost). Charging that refill with the take
     * closes the gap exactly; the margin is withheld, never granted, and what of it the lease
     * did not need goes back with its unused units. A fixed window needs none: its lease ends
     * with the window that counted its units.
     */
    long margin(Rule rule) {
        if (rule.algorithm() == Algorithm.FIXED_WINDOW) {
            return 0;
        }
        long window = rule.window().toMillis();
        try {
            return Math.addExact(Math.multiplyExact(time.toMillis(), rule.limit()), window - 1) / window;
        } catch (ArithmeticException e) {
            // Beyond any burst (at most 10^15), so no lease is taken, and small enough that
            // sums and differences with a burst or a cost stay within a long.
            return Long.MAX_VALUE / 4;
        }
    }

    /** The most units one call may take for the request's {@code cost} plus a lease and its margin. */
    long capacity(Rule rule) {
        return rule.algorithm() == Algorithm.FIXED_WINDOW ? rule.limit() : rule.burst();
    }
}
