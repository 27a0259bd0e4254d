package dev.ratelimit;

import java.util.Objects;

/**
 * What a rule's decision is when the shared store cannot make it (unreachable, too slow, the
 * breaker open, or that rule's state for the key unreadable). Made by {@link #open()},
 * {@link #closed()} or {@link #local(Rule)}.
 *
 * @param kind      the policy
 * @param localRule for {@link Kind#LOCAL}: the rule the in-process limiter enforces meanwhile
 *                  (same name; usually a lower, per-instance limit); null otherwise
 */
public record FailurePolicy(Kind kind, Rule localRule) {

    /** The three policies. */
    public enum Kind {
        /** Let the request pass: a limiter that takes the site down has turned protection into an outage. */
        OPEN,
        /** Refuse the request as unavailable: for login, password reset, one-time codes, paid calls. */
        CLOSED,
        /** Decide with the in-process limiter, limits per instance, until the store answers again. */
        LOCAL
    }

    /**
     * Checks that a local policy has its rule and the others none.
     *
     * @throws IllegalArgumentException when they do not
     */
    public FailurePolicy {
        Objects.requireNonNull(kind, "kind");
        if ((kind == Kind.LOCAL) != (localRule != null)) {
            throw new IllegalArgumentException("failure policy " + kind + ": a local rule goes with LOCAL, and only with it");
        }
    }

    /**
     * Let requests pass while the store cannot decide.
     *
     * @return the policy
     */
    public static FailurePolicy open() {
        return new FailurePolicy(Kind.OPEN, null);
    }

    /**
     * Refuse requests as unavailable while the store cannot decide.
     *
     * @return the policy
     */
    public static FailurePolicy closed() {
        return new FailurePolicy(Kind.CLOSED, null);
    }

    /**
     * Decide with the in-process limiter under the given rule while the store cannot decide.
     * Its shadow flag is not its own: the local rule observes exactly when the rule it stands in
     * for does (a shadow rule's local rule never rejects, an enforcing rule's always may). A claim
     * whose cost is above the local rule's capacity is taken as that capacity, so size the local
     * rule for the largest cost asked of it (the filter's settings refuse a {@code local-limit}
     * that leaves no room for the rule's {@code cost}).
     *
     * @param localRule the rule enforced per instance meanwhile
     * @return the policy
     */
    public static FailurePolicy local(Rule localRule) {
        return new FailurePolicy(Kind.LOCAL, Objects.requireNonNull(localRule, "localRule"));
    }
}
