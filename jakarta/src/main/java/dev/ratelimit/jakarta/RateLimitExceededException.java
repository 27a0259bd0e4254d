package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.MethodDecision;

/**
 * A call of a {@link RateLimited} CDI method that its rules refused: over a limit (429), or a
 * {@code closed} rule that could not reach Valkey (503). It carries the decision: the rules, the
 * {@code Retry-After}, the header fields and the problem body, which
 * {@link RateLimitExceededMapper} answers when the method served a Jakarta REST request.
 */
public class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Not serialized: a decision is of this process only. */
    private final transient MethodDecision decision;

    /**
     * A refusal.
     *
     * @param method   the method refused, for the message
     * @param decision the refusing decision
     */
    public RateLimitExceededException(String method, MethodDecision decision) {
        super(method + " refused by rate limits " + decision.rules() + " (status " + decision.status().orElse(429)
                + ", retry after " + decision.retryAfterSeconds() + " s)");
        this.decision = decision;
    }

    /**
     * The refusing decision.
     *
     * @return its status, rules, {@code Retry-After}, header fields and problem body
     */
    public MethodDecision decision() {
        return decision;
    }
}
