package dev.ratelimit;

import java.util.Objects;

/**
 * The store answered, but one rule's state for one key cannot be read: the key holds a value
 * of another type or form (written by something else, or by hand). This is a fault of that
 * key, not of the store: it never counts towards the circuit breaker, and the filter answers
 * the request by that rule's on-failure policy while the other rules decide as usual.
 * Deleting the key, or waiting for its TTL, ends it.
 */
public final class UnreadableStateException extends RateLimitException {

    private static final long serialVersionUID = 1L;

    private final String ruleName;

    /**
     * An exception naming the rule whose state could not be read.
     *
     * @param rule    the rule's name
     * @param message what the store said, naming the key
     */
    public UnreadableStateException(String rule, String message) {
        super(message, null);
        this.ruleName = Objects.requireNonNull(rule, "rule");
    }

    /**
     * The rule whose state could not be read.
     *
     * @return the rule's name
     */
    public String ruleName() {
        return ruleName;
    }
}
