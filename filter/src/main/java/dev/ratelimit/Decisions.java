package dev.ratelimit;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The answer for a request checked against several rules at once. Immutable; made by
 * {@link #of}.
 *
 * @param allowed    whether every enforcing rule allowed the request (shadow rules only
 *                   observe, so their verdicts do not count)
 * @param decisions  one decision per rule, in the order the rules were given; a shadow rule's
 *                   decision says what it would have answered
 * @param retryAfter zero when allowed; otherwise the time after which the same request, with no
 *                   other traffic, is allowed by every enforcing rule: the longest retry-after
 *                   of the rules that rejected, or longer when the rejection itself charged a
 *                   count-rejected rule that must now recover too
 */
public record Decisions(boolean allowed, List<Decision> decisions, Duration retryAfter) {

    /**
     * Copies the list and checks the components agree.
     *
     * @throws IllegalArgumentException if allowed and retry-after disagree
     */
    public Decisions {
        decisions = List.copyOf(Objects.requireNonNull(decisions, "decisions"));
        Objects.requireNonNull(retryAfter, "retryAfter");
        if (allowed != retryAfter.isZero()) {
            throw new IllegalArgumentException((allowed ? "allowed" : "rejected") + " with retry after " + retryAfter);
        }
    }

    /**
     * The combined answer of several rules.
     *
     * @param claims  the rules asked, in order
     * @param decisions their decisions, in the same order
     * @return allowed when every non-shadow rule allowed
     * @throws IllegalArgumentException if the lists differ in length
     */
    public static Decisions of(List<Claim> claims, List<Decision> decisions) {
        if (claims.size() != decisions.size()) {
            throw new IllegalArgumentException(claims.size() + " rules but " + decisions.size() + " decisions");
        }
        Duration retryAfter = Duration.ZERO;
        boolean allowed = true;
        for (int i = 0; i < decisions.size(); i++) {
            Decision decision = decisions.get(i);
            if (!decision.allowed() && !claims.get(i).rule().shadow()) {
                allowed = false;
                if (decision.retryAfter().compareTo(retryAfter) > 0) {
                    retryAfter = decision.retryAfter();
                }
            }
        }
        return new Decisions(allowed, decisions, retryAfter);
    }

    /**
     * Whether the store could not decide an enforcing rule whose failure policy refuses the
     * request: an outage to report (the filter answers 503), not a limit reached (429).
     *
     * @return true when an enforcing rule's decision is {@link Decision.Basis#UNAVAILABLE}
     */
    public boolean unavailable() {
        return decisions.stream().anyMatch(d -> d.basis() == Decision.Basis.UNAVAILABLE && !d.allowed());
    }
}
