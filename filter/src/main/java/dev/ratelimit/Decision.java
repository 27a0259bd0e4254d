package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;

/**
 * The answer of one rule for one key. Immutable; made by {@link #allowed} or
 * {@link #rejected}.
 *
 * <p>The numbers mean the same for every algorithm:
 * <ul>
 *   <li>{@code remaining}: whole units that could still be taken right now, never negative;</li>
 *   <li>{@code effectiveWindow}: the time within which no more than {@code remaining} units can
 *       be taken, that is until more quota is made available (the {@code t} of the IETF
 *       {@code RateLimit} field, draft-11): the end of a fixed window; when the oldest counted
 *       entry of a sliding log leaves it; when a token bucket or GCRA has the next unit; when a
 *       sliding window counter's estimate has dropped by a unit; when the next lease of a
 *       concurrency rule times out at the latest. With the quota full, more cannot come: the
 *       time the rule takes to restore its whole quota at its rate (its window for most rules;
 *       zero for a concurrency rule, whose quota has no window);</li>
 *   <li>{@code resetAfter}: the time until the quota is fully restored if nothing more
 *       arrives;</li>
 *   <li>{@code retryAfter}: zero when allowed; otherwise the time until a request of the same
 *       cost would be allowed, rounded up, never early. Never before the effective window
 *       ends: the request needs more than {@code remaining}.</li>
 * </ul>
 *
 * @param rule       the name of the rule that decided
 * @param allowed    whether this rule lets the request through
 * @param limit      the rule's limit (units per window)
 * @param remaining  units left now
 * @param effectiveWindow time within which no more than {@code remaining} units can be taken
 * @param resetAfter time until the quota is full again
 * @param retryAfter time until a request of the same cost would be allowed (zero if allowed)
 * @param basis      what decided: the shared store, the in-process fallback, or, when the store
 *                   could not decide, the rule's failure policy
 */
public record Decision(String rule, boolean allowed, long limit, long remaining, Duration effectiveWindow,
                       Duration resetAfter, Duration retryAfter, Basis basis) {

    /** What a decision rests on. */
    public enum Basis {
        /** The shared store decided (or the deny cache replayed what it decided moments ago). */
        SHARED,
        /** The store could not decide; the in-process limiter did, at the rule's local limit. */
        LOCAL,
        /**
         * Not decided, and nothing was counted: the store could not decide and the rule's policy
         * lets the request pass, or another rule of the request rejected it from the deny cache
         * or by a closed policy. The numbers say nothing.
         */
        SKIPPED,
        /** The store could not decide and the rule's policy refuses the request (503, not 429). */
        UNAVAILABLE
    }

    /**
     * Validates the components.
     *
     * @throws IllegalArgumentException if a number is negative, or an allowed decision has a
     *                                  retry-after, or a rejected one has none
     */
    public Decision {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(effectiveWindow, "effectiveWindow");
        Objects.requireNonNull(resetAfter, "resetAfter");
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(basis, "basis");
        if (remaining < 0 || limit < 1 || effectiveWindow.isNegative() || resetAfter.isNegative()
                || retryAfter.isNegative()) {
            throw new IllegalArgumentException("invalid decision for rule '" + rule + "': limit " + limit
                    + ", remaining " + remaining + ", effective window " + effectiveWindow + ", reset after "
                    + resetAfter + ", retry after " + retryAfter);
        }
        if (allowed != retryAfter.isZero()) {
            throw new IllegalArgumentException("invalid decision for rule '" + rule + "': "
                    + (allowed ? "allowed" : "rejected") + " with retry after " + retryAfter);
        }
    }

    /**
     * A decision that lets the request through. Its effective window is {@code resetAfter}
     * until {@link #withEffectiveWindow} says better: no more than {@code remaining} units come
     * before the quota is full again.
     *
     * @param rule       the rule's name
     * @param limit      the rule's limit
     * @param remaining  units left now
     * @param resetAfter time until the quota is full again
     * @return the decision
     */
    public static Decision allowed(String rule, long limit, long remaining, Duration resetAfter) {
        return new Decision(rule, true, limit, remaining, resetAfter, resetAfter, Duration.ZERO, Basis.SHARED);
    }

    /**
     * A decision that turns the request away. Its effective window is the shorter of
     * {@code resetAfter} and {@code retryAfter} until {@link #withEffectiveWindow} says better:
     * more quota has come by the time the request is allowed.
     *
     * @param rule       the rule's name
     * @param limit      the rule's limit
     * @param remaining  units left now
     * @param resetAfter time until the quota is full again
     * @param retryAfter time until a request of the same cost would be allowed, positive
     * @return the decision
     */
    public static Decision rejected(String rule, long limit, long remaining, Duration resetAfter,
                                    Duration retryAfter) {
        Duration effectiveWindow = resetAfter.compareTo(retryAfter) < 0 ? resetAfter : retryAfter;
        return new Decision(rule, false, limit, remaining, effectiveWindow, resetAfter, retryAfter, Basis.SHARED);
    }

    /**
     * A decision the store could not make, answered by a failure policy that lets the request
     * pass.
     *
     * @param rule  the rule's name
     * @param limit the rule's limit
     * @return an allowed decision whose basis is {@link Basis#SKIPPED}
     */
    public static Decision skipped(String rule, long limit) {
        return new Decision(rule, true, limit, limit, Duration.ZERO, Duration.ZERO, Duration.ZERO, Basis.SKIPPED);
    }

    /**
     * A decision the store could not make, answered by a failure policy that refuses.
     *
     * @param rule       the rule's name
     * @param limit      the rule's limit
     * @param retryAfter when to try again, positive
     * @return a rejected decision whose basis is {@link Basis#UNAVAILABLE}
     */
    public static Decision unavailable(String rule, long limit, Duration retryAfter) {
        return new Decision(rule, false, limit, 0, Duration.ZERO, Duration.ZERO, retryAfter, Basis.UNAVAILABLE);
    }

    /**
     * This decision as made by the in-process fallback.
     *
     * @return the same numbers with the basis {@link Basis#LOCAL}
     */
    public Decision fromFallback() {
        return new Decision(rule, allowed, limit, remaining, effectiveWindow, resetAfter, retryAfter, Basis.LOCAL);
    }

    /**
     * This decision with the effective window its algorithm computed.
     *
     * @param effectiveWindow time within which no more than {@link #remaining()} units can be
     *                        taken, not negative
     * @return the same decision with that effective window
     */
    public Decision withEffectiveWindow(Duration effectiveWindow) {
        return new Decision(rule, allowed, limit, remaining, effectiveWindow, resetAfter, retryAfter, basis);
    }
}
