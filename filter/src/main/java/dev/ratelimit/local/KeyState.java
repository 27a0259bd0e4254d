package dev.ratelimit.local;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

/**
 * What one rule remembers about one key in the in-process limiter. Each algorithm has its own
 * implementation, the Java twin of its Lua file, with the same arithmetic and the same answers.
 *
 * <p>Not thread-safe: {@link LocalRateLimiter} serialises access.
 */
interface KeyState {

    /**
     * Decides a request and, when told to, consumes its cost.
     *
     * @param now               the time in ms
     * @param rule              the rule (its limit, window and burst)
     * @param cost              units the request takes, within the rule's capacity
     * @param consumeIfAllowed  whether to take the units when this rule allows
     * @param consumeIfRejected whether to take the units when this rule rejects
     * @param call              the number of the deciding call, unique in the limiter and never
     *                          reused (the Lua {@code CALL_ID}): a state started by this call is
     *                          of its generation, and leases and log entries are named after it
     * @return the answer, describing the state after any write
     */
    Verdicts.Answer take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected, long call);

    /**
     * Gives back units an earlier {@link #take} took, as the algorithm's Lua {@code refund} does:
     * only if they are still there, never units taken since in their place (after a reset or an
     * edit, the state's generation or the names of its units say which are the take's own).
     *
     * @param now   the time in ms
     * @param rule  the rule as it was when the units were taken
     * @param cost  the units taken
     * @param taken the take's answer: what it wrote ({@link Verdicts.Answer#undo()}), and for a
     *              delayed take its slot
     * @return whether anything was given back
     */
    boolean refund(long now, Rule rule, long cost, Verdicts.Answer taken);

    /**
     * When this state stops mattering: from then on it answers exactly as a new state would.
     *
     * @return epoch ms
     */
    long expiresAt();

    /**
     * A fresh state for the algorithm.
     *
     * @param algorithm the rule's algorithm
     * @return an empty state
     */
    static KeyState create(Algorithm algorithm) {
        return switch (algorithm) {
            case FIXED_WINDOW -> new FixedWindowState();
            case SLIDING_LOG -> new SlidingLogState();
            case SLIDING_WINDOW_COUNTER -> new SlidingWindowCounterState();
            case TOKEN_BUCKET, GCRA -> new BucketState();
            case CONCURRENCY -> new ConcurrencyState();
        };
    }

    /** ceil(a / b) for a >= 0, b > 0. */
    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
