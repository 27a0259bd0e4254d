package dev.ratelimit;

import java.util.Objects;

/**
 * A rule and the key it counts for, e.g. rule {@code login} and key {@code user:4182}.
 *
 * @param rule the rule
 * @param key  what is limited: any non-empty text; the limiter makes it safe to use inside a
 *             Valkey key (long or unusual values are hashed)
 */
public record RuleKey(Rule rule, String key) {

    /**
     * Checks that both parts are present.
     *
     * @throws IllegalArgumentException if the key is empty
     */
    public RuleKey {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("rule '" + rule.name() + "': the key must not be empty");
        }
    }
}
