package dev.ratelimit.internal;

import dev.ratelimit.RuleKey;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Argument checks shared by every limiter, so that all of them refuse the same input. */
public final class RuleKeys {

    private RuleKeys() {
    }

    /**
     * Checks a request for several rules.
     *
     * @param ruleKeys the rules and keys
     * @param cost     the units to take under each
     * @throws IllegalArgumentException if the list is empty, names a rule twice or the cost is
     *                                  out of range for one rule
     */
    public static void check(List<RuleKey> ruleKeys, long cost) {
        Objects.requireNonNull(ruleKeys, "ruleKeys");
        if (ruleKeys.isEmpty()) {
            throw new IllegalArgumentException("at least one rule is needed");
        }
        Set<String> names = new HashSet<>();
        for (RuleKey ruleKey : ruleKeys) {
            Objects.requireNonNull(ruleKey, "ruleKey");
            if (!names.add(ruleKey.rule().name())) {
                throw new IllegalArgumentException("rule '" + ruleKey.rule().name()
                        + "' is given twice: a request is decided once per rule");
            }
            ruleKey.rule().checkCost(cost);
        }
    }
}
