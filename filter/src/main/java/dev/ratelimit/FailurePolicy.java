package dev.ratelimit;

import java.util.Objects;

/**
 * What a rule's decision is when the shared store cannot make it (unreachable, too slow, the
 * breaker open, or that rule's state for the key unreadable): {@link #open()}, {@link #closed()}
 * or {@link #local(Rule)}. One of three types, so that only a local policy has a rule:
 * <pre>{@code
 * if (policy instanceof FailurePolicy.Local local) {
 *     Rule perInstance = local.rule();
 * }
 * }</pre>
 */
public sealed interface FailurePolicy permits FailurePolicy.Open, FailurePolicy.Closed, FailurePolicy.Local {

    /** The three policies, for a {@code switch}. */
    enum Kind {
        /** Let the request pass: a limiter that takes the site down has turned protection into an outage. */
        OPEN,
        /** Refuse the request as unavailable: for login, password reset, one-time codes, paid calls. */
        CLOSED,
        /** Decide with the in-process limiter, limits per instance, until the store answers again. */
        LOCAL
    }

    /**
     * Which of the three this policy is.
     *
     * @return the kind
     */
    Kind kind();

    /**
     * Let requests pass while the store cannot decide.
     *
     * @return the policy
     */
    static FailurePolicy open() {
        return new Open();
    }

    /**
     * Refuse requests as unavailable while the store cannot decide.
     *
     * @return the policy
     */
    static FailurePolicy closed() {
        return new Closed();
    }

    /**
     * Decide with the in-process limiter under the given rule while the store cannot decide.
     * Its shadow flag is not its own: the local rule observes exactly when the rule it stands in
     * for does (a shadow rule's local rule never rejects, an enforcing rule's always may). A claim
     * whose cost is above the local rule's capacity is taken as that capacity, so size the local
     * rule for the largest cost asked of it (the filter's settings refuse a {@code local-limit}
     * that leaves no room for the rule's {@code cost}).
     *
     * @param rule the rule enforced per instance meanwhile (same name; usually a lower limit)
     * @return the policy
     */
    static Local local(Rule rule) {
        return new Local(rule);
    }

    /** Let the request pass ({@link #open()}). */
    record Open() implements FailurePolicy {
        /** {@inheritDoc} */
        @Override
        public Kind kind() {
            return Kind.OPEN;
        }
    }

    /** Refuse the request as unavailable, a 503 ({@link #closed()}). */
    record Closed() implements FailurePolicy {
        /** {@inheritDoc} */
        @Override
        public Kind kind() {
            return Kind.CLOSED;
        }
    }

    /**
     * Decide with the in-process limiter ({@link #local(Rule)}).
     *
     * @param rule the rule the in-process limiter enforces meanwhile
     */
    record Local(Rule rule) implements FailurePolicy {
        /**
         * Checks the rule is there.
         *
         * @throws NullPointerException if it is not
         */
        public Local {
            Objects.requireNonNull(rule, "rule");
        }

        /** {@inheritDoc} */
        @Override
        public Kind kind() {
            return Kind.LOCAL;
        }
    }
}
