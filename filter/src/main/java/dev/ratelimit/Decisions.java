package dev.ratelimit;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The answer for a request checked against several rules at once. Immutable and thread-safe;
 * made by {@link #of}.
 *
 * <pre>{@code
 * Decisions decisions = limiter.acquireAll(List.of(Claim.of(perUser, "user:4182"), Claim.of(perTenant, "tenant:7")));
 * if (!decisions.allowed()) {
 *     Duration wait = decisions.retryAfter();
 * }
 * long left = decisions.get(0).remaining();
 * }</pre>
 */
public final class Decisions {

    private final boolean allowed;
    private final List<Decision> all;
    private final Duration retryAfter;

    private Decisions(boolean allowed, List<Decision> all, Duration retryAfter) {
        this.all = List.copyOf(Objects.requireNonNull(all, "decisions"));
        this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
        if (retryAfter.isNegative()) {
            throw new IllegalArgumentException("retry after " + retryAfter + " is negative");
        }
        if (allowed != retryAfter.isZero()) {
            throw new IllegalArgumentException((allowed ? "allowed" : "rejected") + " with retry after " + retryAfter);
        }
        this.allowed = allowed;
    }

    /**
     * The combined answer of several rules: allowed when every enforcing rule allowed, the
     * retry-after the longest of the rules that rejected.
     *
     * @param claims    the rules asked, in order
     * @param decisions their decisions, in the same order
     * @return the combined answer
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
     * A combined answer whose verdict and retry-after are known apart from its decisions (a
     * rejection that charged a count-rejected rule, which must recover too; a request another
     * part of the path rejected).
     *
     * @param allowed    whether the request is allowed
     * @param decisions  one decision per rule, in order
     * @param retryAfter zero when allowed, positive otherwise
     * @return the combined answer
     * @throws IllegalArgumentException if allowed and retry-after disagree
     */
    public static Decisions of(boolean allowed, List<Decision> decisions, Duration retryAfter) {
        return new Decisions(allowed, decisions, retryAfter);
    }

    /**
     * Whether every enforcing rule allowed the request (shadow rules only observe, so their
     * verdicts do not count).
     *
     * @return true if allowed
     */
    public boolean allowed() {
        return allowed;
    }

    /**
     * One decision per rule, in the order the rules were given; a shadow rule's says what it
     * would have answered.
     *
     * @return the decisions, unmodifiable
     */
    public List<Decision> all() {
        return all;
    }

    /**
     * The decision of the rule at a position.
     *
     * @param index the claim's position in the request
     * @return its decision
     * @throws IndexOutOfBoundsException if there is no such claim
     */
    public Decision get(int index) {
        return all.get(index);
    }

    /**
     * Zero when allowed; otherwise the time after which the same request, with no other
     * traffic, is allowed by every enforcing rule: the longest retry-after of the rules that
     * rejected, or longer when the rejection itself charged a count-rejected rule that must now
     * recover too.
     *
     * @return the time to wait
     */
    public Duration retryAfter() {
        return retryAfter;
    }

    /**
     * How long after the decision the request's slot comes: zero when rejected or allowed now;
     * else the longest {@link Decision#delay()} of its enforcing rules (a shadow rule never
     * delays). The units are taken; the action must not happen before then.
     *
     * @return the time until the request's slot
     */
    public Duration delay() {
        if (!allowed) {
            return Duration.ZERO;
        }
        Duration longest = Duration.ZERO;
        for (Decision decision : all) {
            if (decision.delay().compareTo(longest) > 0) {
                longest = decision.delay();
            }
        }
        return longest;
    }

    /**
     * Whether the store could not decide an enforcing rule whose failure policy refuses the
     * request: an outage to report (the filter answers 503), not a limit reached (429).
     *
     * @return true when an enforcing rule's decision is {@link Decision.Basis#UNAVAILABLE}
     */
    public boolean unavailable() {
        // A loop, not a stream: asked of every request.
        for (int i = 0; i < all.size(); i++) {
            Decision d = all.get(i);
            if (d.basis() == Decision.Basis.UNAVAILABLE && !d.allowed()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Decisions d && allowed == d.allowed && all.equals(d.all)
                && retryAfter.equals(d.retryAfter);
    }

    @Override
    public int hashCode() {
        return Objects.hash(allowed, all, retryAfter);
    }

    @Override
    public String toString() {
        return "Decisions[allowed=" + allowed + ", decisions=" + all + ", retryAfter=" + retryAfter + "]";
    }
}
