package dev.ratelimit.resilient;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.UndoableClaims;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * One request through {@link ResilientRateLimiter}, in the order {@link #decide} lists: the
 * claims checked (once for the whole path), a rejection the deny cache holds replayed, the store
 * asked, a rule it cannot decide falling to its policy, the verdict combined and reported, what
 * the deny cache learns from it, and the settling of the parts decided apart ({@link Settlement}).
 */
final class DecisionPath {

    private final RateLimiter shared;
    private final FailurePolicies policies;
    private final DenyCache denyCache;
    private final StoreHealth health;
    private final RateLimitListener listener;
    private final LongSupplier clock;
    private final DecisionEvents events;
    private final Settlement settlement;

    /**
     * The path.
     *
     * @param shared         the limiter that decides while it can
     * @param policies       what decides the rules it cannot
     * @param denyCache      the rejections remembered; null when off
     * @param health         told whether the store answered
     * @param listener       told of every decision, guarded
     * @param clock          the deny cache's clock, epoch milliseconds
     * @param nearLimitRatio the share of a quota used from which an allowed request is near its limit
     */
    DecisionPath(RateLimiter shared, FailurePolicies policies, DenyCache denyCache, StoreHealth health,
                 RateLimitListener listener, LongSupplier clock, double nearLimitRatio) {
        this.shared = shared;
        this.policies = policies;
        this.denyCache = denyCache;
        this.health = health;
        this.listener = listener;
        this.clock = clock;
        this.events = new DecisionEvents(listener, nearLimitRatio);
        this.settlement = new Settlement(shared, policies, denyCache, health, listener);
    }

    /** What a caller does with the units taken. */
    enum Mode {
        /** Keeps them: nothing to give back is built. */
        ACQUIRE,
        /**
         * Keeps them unless the request is refused by another layer after they were taken: they
         * can be given back, but rarely are, so the deny cache still keeps the rules' rejections.
         */
        TAKE,
        /** Keeps or gives them back by the work's outcome: often given back, never in the deny cache. */
        RESERVE
    }

    /**
     * The decision path of {@link ResilientRateLimiter#acquireAll} and
     * {@link ResilientRateLimiter#reserveAll}, step by step. Unless acquiring, the store's and the
     * fallback's units are kept to give back; acquiring, the store is asked to acquire only, so
     * that nothing to give back is built per request.
     *
     * @param claims the request's claims
     * @param mode   what the caller does with the units
     * @return the request's reservation; kept (nothing to give back) when acquiring
     */
    Reservation decide(List<Claim> claims, Mode mode) {
        claims = Claims.checked(claims);
        if (mode == Mode.RESERVE && denyCache != null) {
            // Its rules' rejections are never remembered from now on: reserved units come back often.
            denyCache.reserving(claims);
        }
        long now = clock.getAsLong();
        Optional<Decisions> denied = denyCache == null ? Optional.empty() : denyCache.replay(claims, now, listener);
        if (denied.isPresent()) {
            return Reservation.kept(denied.get());
        }
        // Before the store is asked: a key changed from here on keeps its rejection out of the cache.
        long mark = denyCache == null ? 0 : denyCache.mark();
        Asked asked = askStore(claims, mode);
        Reservation local = policies.decide(claims, asked.byPolicy(), asked.decisions());
        Decisions result = withStoreVerdict(Decisions.of(claims, List.of(asked.decisions())), asked.answer());
        events.report(claims, result);
        // The store decided somewhere between the asking and the answer (on its own clock): a
        // retry-after counted from before would end early, a window of no room counted from after
        // would last too long (DenyCache.Denial).
        remember(claims, result, now, clock.getAsLong(), mark);
        return settlement.settle(claims, result, mode != Mode.ACQUIRE, asked.reserved(), asked.storeClaims(), local);
    }

    /**
     * What asking the store gave: each claim's decision, null where a policy decides it; the
     * claims it could not decide; its own verdict; what it took, to give back, and for which claims.
     */
    private record Asked(Decision[] decisions, List<Integer> byPolicy, Decisions answer, Reservation reserved,
                         List<Claim> storeClaims) {
    }

    /**
     * Asks the store for every claim it can decide: a key whose state it cannot read falls to its
     * rule's policy and the others are asked again (or not at all once that policy refuses the
     * request); a store that fails leaves every claim still pending to its policy.
     */
    private Asked askStore(List<Claim> claims, Mode mode) {
        Decision[] decisions = new Decision[claims.size()];
        List<Integer> pending = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            pending.add(i);
        }
        List<Integer> byPolicy = new ArrayList<>();
        Decisions answer = null;
        Reservation reserved = null;
        List<Claim> storeClaims = List.of();
        while (!pending.isEmpty()) {
            try {
                storeClaims = Claims.part(claims, pending);
                long began = System.nanoTime();
                // Once a rule has fallen to its policy, what the store takes must be given back
                // should that policy reject the request.
                if (mode == Mode.TAKE) {
                    reserved = shared.reserveAll(UndoableClaims.of(storeClaims));
                    answer = reserved.decisions();
                } else if (mode == Mode.RESERVE || !byPolicy.isEmpty()) {
                    reserved = shared.reserveAll(storeClaims);
                    answer = reserved.decisions();
                } else {
                    answer = shared.acquireAll(storeClaims);
                }
                long took = System.nanoTime() - began;
                for (Claim claim : storeClaims) {
                    listener.onDecisionTime(claim.rule().name(), took);
                }
                health.answered();
                for (int j = 0; j < pending.size(); j++) {
                    decisions[pending.get(j)] = answer.get(j);
                }
                pending.clear();
            } catch (UnreadableStateException e) {
                // One key's fault: that rule alone falls to its policy (the limiter logged it once).
                int bad = pending.stream().filter(i -> claims.get(i).rule().name().equals(e.ruleName())).findFirst()
                        .orElse(pending.get(0));
                pending.remove(Integer.valueOf(bad));
                byPolicy.add(bad);
                if (policies.closes(claims.get(bad))) {
                    // Refused anyway: the others are not asked, and no policy of theirs refused
                    // (the 503 names only the rules that could not be checked).
                    for (int i : pending) {
                        decisions[i] = Verdicts.skipped(claims.get(i).rule().name(), claims.get(i).rule().limit());
                    }
                    pending.clear();
                }
            } catch (RuntimeException e) {
                health.failed(e);
                byPolicy.addAll(pending);
                pending.clear();
            }
        }
        return new Asked(decisions, byPolicy, answer, reserved, storeClaims);
    }

    /**
     * What a peek answers: the store's decision, or the rule's policy's when it cannot answer.
     *
     * @param rule the rule
     * @param key  the key
     * @param cost the cost
     * @return the decision, read-only
     */
    Decision peek(Rule rule, String key, long cost) {
        // Checked before the store is asked: a bad argument is the caller's, not a store failure
        // for the policy to answer.
        Claim.of(rule, key, cost);
        try {
            Decision decision = shared.peek(rule, key, cost);
            health.answered();
            return decision;
        } catch (RuntimeException e) {
            if (!(e instanceof UnreadableStateException)) {
                health.failed(e);
            }
            return policies.peek(rule, key, cost);
        }
    }

    /**
     * The store's own verdict stands: a rejection it decided (a cluster group that rejected while
     * the others now allow) stays a rejection, and its retry-after, which covers the rules the
     * rejection itself charged, is never shortened by recombining the per-rule decisions.
     */
    private static Decisions withStoreVerdict(Decisions combined, Decisions store) {
        if (store == null || store.allowed()) {
            return combined;
        }
        Duration retryAfter = combined.retryAfter().compareTo(store.retryAfter()) > 0
                ? combined.retryAfter() : store.retryAfter();
        return Decisions.of(false, combined.all(), retryAfter);
    }

    /**
     * The rejections worth remembering: only those whose retry-after is exact. A concurrency
     * rule's is an upper bound (a lease is usually released long before it times out), and so is
     * that of a rule requests reserve (units reserved may be given back at any moment; the deny
     * cache keeps none): remembering them would lock callers out of free room. A rule the store
     * allowed for a key may have taken units: a rejection remembered for that key, of another
     * cost or rule, is forgotten (its retry-after could now be early).
     */
    private void remember(List<Claim> claims, Decisions decisions, long askedAt, long answeredAt, long mark) {
        if (denyCache == null) {
            return;
        }
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            Decision decision = decisions.get(i);
            if (decision.basis() != Decision.Basis.SHARED) {
                continue;
            }
            if (decision.allowed()) {
                denyCache.forget(rule.name(), claims.get(i).key());
            } else if (!rule.shadow() && !rule.countRejected() && rule.algorithm() != Algorithm.CONCURRENCY) {
                denyCache.deny(claims.get(i), decision, askedAt, answeredAt, mark);
            }
        }
    }
}
