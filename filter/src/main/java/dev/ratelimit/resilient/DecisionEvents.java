package dev.ratelimit.resilient;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Rule;

import java.util.List;

/**
 * The metrics events of a request the decision path decided, per rule: allowed, rejected or
 * shadow-rejected, and near the limit. A rule that was not decided (skipped, or refused unchecked
 * by a closed policy) has no verdict to count. The other events are reported where they happen:
 * a replayed rejection by the deny cache, a rule falling to its policy by the policies, a refund
 * given back or dropped by the settling.
 */
final class DecisionEvents {

    private final RateLimitListener listener;
    private final double nearLimitRatio;

    /**
     * The events.
     *
     * @param listener       told of them, guarded
     * @param nearLimitRatio the share of a quota used from which an allowed request is near its limit
     */
    DecisionEvents(RateLimitListener listener, double nearLimitRatio) {
        this.listener = listener;
        this.nearLimitRatio = nearLimitRatio;
    }

    /**
     * Reports each rule's verdict on a request.
     *
     * @param claims    the request's claims
     * @param decisions their decisions, in the same order
     */
    void report(List<Claim> claims, Decisions decisions) {
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            Decision decision = decisions.get(i);
            if (decision.basis() == Decision.Basis.SKIPPED || decision.basis() == Decision.Basis.UNAVAILABLE) {
                continue;
            }
            listener.onEvent(rule.name(), decision.allowed() ? RateLimitListener.Event.ALLOWED
                    : rule.shadow() ? RateLimitListener.Event.SHADOW_REJECTED : RateLimitListener.Event.REJECTED);
            if (decision.allowed() && nearLimit(rule, decision.remaining())) {
                listener.onEvent(rule.name(), RateLimitListener.Event.NEAR_LIMIT);
            }
            if (decisions.allowed() && !decision.delay().isZero()) {
                listener.onEvent(rule.name(), RateLimitListener.Event.DELAYED);
                listener.onDelay(rule.name(), decision.delay().toNanos());
            }
        }
    }

    /** Whether at least the near-limit share of the quota is used (with room for 0.8's binary rounding). */
    private boolean nearLimit(Rule rule, long remaining) {
        long used = rule.capacity() - Math.min(remaining, rule.capacity());
        return used >= rule.capacity() * nearLimitRatio - 1e-9;
    }
}
