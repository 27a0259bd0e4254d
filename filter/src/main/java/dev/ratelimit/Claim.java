package dev.ratelimit;

import java.util.Objects;

/**
 * A claim on a rule's quota: {@code cost} units for one key, e.g. one unit of rule
 * {@code login} for key {@code user:4182}. Several claims are decided together by
 * {@link RateLimiter#acquireAll}.
 *
 * @param rule the rule
 * @param key  what is limited: any non-empty text; the limiter makes it safe to use inside a
 *             Valkey key (long or unusual values are hashed)
 * @param cost units to take, between 1 and the rule's {@link Rule#capacity()}
 */
public record Claim(Rule rule, String key, long cost) {

    /**
     * Checks every part.
     *
     * @throws IllegalArgumentException if the key is empty or the cost out of range
     */
    public Claim {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("rule '" + rule.name() + "': the key must not be empty");
        }
        rule.checkCost(cost);
    }

    /**
     * A claim of one unit.
     *
     * @param rule the rule
     * @param key  what is limited
     * @return the claim
     */
    public static Claim of(Rule rule, String key) {
        return new Claim(rule, key, 1);
    }

    /**
     * A claim of several units.
     *
     * @param rule the rule
     * @param key  what is limited
     * @param cost units to take
     * @return the claim
     */
    public static Claim of(Rule rule, String key, long cost) {
        return new Claim(rule, key, cost);
    }
}
