package dev.ratelimit;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The answer for a request checked against several rules at once: allowed only if every rule
 * allows it. Immutable.
 *
 * @param allowed   whether every rule allowed the request (and so every rule consumed)
 * @param decisions one decision per rule, in the order the rules were given
 */
public record Decisions(boolean allowed, List<Decision> decisions) {

    /**
     * Copies the list and checks that {@code allowed} agrees with it.
     *
     * @throws IllegalArgumentException if {@code allowed} is not "every decision allowed"
     */
    public Decisions {
        decisions = List.copyOf(Objects.requireNonNull(decisions, "decisions"));
        boolean every = decisions.stream().allMatch(Decision::allowed);
        if (allowed != every) {
            throw new IllegalArgumentException("allowed=" + allowed + " disagrees with the decisions " + decisions);
        }
    }

    /**
     * The combined answer for the given per-rule decisions.
     *
     * @param decisions one decision per rule
     * @return allowed when every decision is
     */
    public static Decisions of(List<Decision> decisions) {
        return new Decisions(decisions.stream().allMatch(Decision::allowed), decisions);
    }

    /**
     * The longest retry-after among the rejecting rules: the request can pass only once every
     * one of them allows it.
     *
     * @return zero when allowed
     */
    public Duration retryAfter() {
        return decisions.stream().map(Decision::retryAfter).max(Duration::compareTo).orElse(Duration.ZERO);
    }
}
