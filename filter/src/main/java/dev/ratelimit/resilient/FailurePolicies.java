package dev.ratelimit.resilient;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the limiter answers for rules the shared store cannot decide: each rule's
 * {@link FailurePolicy}, and the in-process limiter the local ones decide with.
 */
final class FailurePolicies {

    private final Map<String, FailurePolicy> policies;
    private final FailurePolicy defaultPolicy;
    private final LocalRateLimiter fallback;
    private final RateLimitListener listener;
    private final Duration failureRetryAfter;

    /**
     * The policies.
     *
     * @param policies          per rule name
     * @param defaultPolicy     for rules not named
     * @param fallback          the in-process limiter of local policies
     * @param listener          told of store errors and fallback decisions
     * @param failureRetryAfter the retry-after of a decision refused by a closed policy
     */
    public FailurePolicies(Map<String, FailurePolicy> policies, FailurePolicy defaultPolicy, LocalRateLimiter fallback,
                           RateLimitListener listener, Duration failureRetryAfter) {
        this.policies = Map.copyOf(policies);
        this.defaultPolicy = defaultPolicy;
        this.fallback = fallback;
        this.listener = listener;
        this.failureRetryAfter = failureRetryAfter;
    }

    /**
     * A rule's policy.
     *
     * @param rule the rule's name
     * @return its policy, or the default
     */
    public FailurePolicy policy(String rule) {
        return policies.getOrDefault(rule, defaultPolicy);
    }

    /**
     * Whether a claim's rule refuses the request when the store cannot decide it.
     *
     * @param claim the claim
     * @return true for a closed policy on an enforcing rule
     */
    public boolean closes(Claim claim) {
        return policy(claim.rule().name()).kind() == FailurePolicy.Kind.CLOSED && !claim.rule().shadow();
    }

    /**
     * Decides, by their rules' policies, the claims the store could not decide. A closed
     * enforcing rule refuses the request: then nothing is counted locally either.
     *
     * @param claims    the request's claims
     * @param byPolicy  the indexes of those the store could not decide
     * @param decisions the request's decisions, filled in at those indexes
     * @return what the in-process fallback took, to give back or release with the request's
     *         reservation; null when it decided nothing
     */
    public Reservation decide(List<Claim> claims, List<Integer> byPolicy, Decision[] decisions) {
        if (byPolicy.isEmpty()) {
            return null;
        }
        boolean closed = byPolicy.stream().anyMatch(i -> closes(claims.get(i)));
        List<Integer> local = new ArrayList<>();
        for (int i : byPolicy) {
            Claim claim = claims.get(i);
            listener.onEvent(claim.rule().name(), RateLimitListener.Event.STORE_ERROR);
            listener.onEvent(claim.rule().name(), RateLimitListener.Event.FALLBACK);
            FailurePolicy policy = policy(claim.rule().name());
            if (policy.kind() == FailurePolicy.Kind.CLOSED && !claim.rule().shadow()) {
                decisions[i] = Verdicts.unavailable(claim.rule().name(), claim.rule().limit(), failureRetryAfter);
            } else if (policy.kind() == FailurePolicy.Kind.LOCAL && !closed) {
                local.add(i);
            } else {
                // Open, or not counted locally because a closed rule refuses the request anyway.
                decisions[i] = Verdicts.skipped(claim.rule().name(), claim.rule().limit());
            }
        }
        if (local.isEmpty()) {
            return null;
        }
        List<Claim> localClaims = new ArrayList<>(local.size());
        for (int i : local) {
            Claim claim = claims.get(i);
            Rule localRule = localRule(claim.rule());
            localClaims.add(Claim.of(localRule, claim.key(), Math.min(claim.cost(), localRule.capacity())));
        }
        Reservation reserved = fallback.reserveAll(localClaims);
        Decisions decided = reserved.decisions();
        for (int j = 0; j < local.size(); j++) {
            decisions[local.get(j)] = Verdicts.fromFallback(decided.get(j));
        }
        return reserved;
    }

    /**
     * The rule a local policy enforces for a rule, shadow exactly when that rule is: the
     * fallback decides a request's local rules together, all or nothing by their own shadow
     * flags, while the request is combined by its rules' flags; a local rule that rejected where
     * its rule only observes would keep the request's other local rules from counting while the
     * request passes. Derived rather than checked, so no policy can be built that does that.
     */
    private Rule localRule(Rule rule) {
        Rule local = ((FailurePolicy.Local) policy(rule.name())).rule();
        return local.shadow() == rule.shadow() ? local : local.withShadow(rule.shadow());
    }

    /**
     * What a peek answers when the store cannot.
     *
     * @param rule the rule
     * @param key  the key
     * @param cost the cost
     * @return the policy's decision
     */
    public Decision peek(Rule rule, String key, long cost) {
        FailurePolicy policy = policy(rule.name());
        return switch (policy.kind()) {
            case OPEN -> Verdicts.skipped(rule.name(), rule.limit());
            case CLOSED -> Verdicts.unavailable(rule.name(), rule.limit(), failureRetryAfter);
            case LOCAL -> {
                Rule local = localRule(rule);
                yield Verdicts.fromFallback(fallback.peek(local, key, Math.min(cost, local.capacity())));
            }
        };
    }

    /**
     * A charge the store could not take (see {@link dev.ratelimit.Reservation#commit(java.util.function.ToLongFunction)}),
     * by the rule's policy: a local policy's fallback counts it, so that while the store is away
     * the key is refused here as it would be there; an open or closed policy has nowhere to put
     * it (closed refuses the key anyway until the store answers, which then has not counted it).
     *
     * @param claim the claim the work was admitted by
     * @param units the units to count
     * @return whether the fallback counted all of them
     */
    public boolean charge(Claim claim, long units) {
        if (policy(claim.rule().name()) instanceof FailurePolicy.Local) {
            return fallback.charge(Claim.of(localRule(claim.rule()), claim.key()), units);
        }
        return false;
    }

    /**
     * Forgets a key in the fallback.
     *
     * @param rule the shared rule
     * @param key  the key
     */
    public void reset(Rule rule, String key) {
        FailurePolicy policy = policy(rule.name());
        if (policy instanceof FailurePolicy.Local local) {
            fallback.reset(local.rule(), key);
        }
    }

    /** Releases the fallback. */
    public void close() {
        fallback.close();
    }
}
