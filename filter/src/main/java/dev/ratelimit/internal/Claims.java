package dev.ratelimit.internal;

import dev.ratelimit.Claim;
import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Argument checks shared by every limiter, so that all of them refuse the same input. */
public final class Claims {

    private Claims() {
    }

    /**
     * Checks the claims of one request, unless they were checked where the request entered (see
     * {@link #checked}).
     *
     * @param claims the claims
     * @throws IllegalArgumentException if the list is empty or names a rule twice
     */
    public static void check(List<Claim> claims) {
        if (claims instanceof CheckedClaims) {
            return;
        }
        Objects.requireNonNull(claims, "claims");
        if (claims.isEmpty()) {
            throw new IllegalArgumentException("at least one claim is needed");
        }
        Set<String> names = new HashSet<>();
        for (Claim claim : claims) {
            Objects.requireNonNull(claim, "claim");
            if (!names.add(claim.rule().name())) {
                throw new IllegalArgumentException("rule '" + claim.rule().name()
                        + "' is given twice: a request is decided once per rule");
            }
        }
    }

    /**
     * The claims as they are decided: a rule with a {@link dev.ratelimit.Rule#maxDelay()} holds a
     * request for a slot only when it decides the request alone (beside shadow rules, which only
     * observe, and concurrency rules, whose permits are held while the request waits). With
     * another rule deciding it too, the request would pass at one rule's slot while the other
     * counted it at the decision: the other's requests would pass bunched. Then no rule delays.
     *
     * @param claims the claims, checked
     * @return the same list, or one whose delaying rules do not delay
     */
    public static List<Claim> delayingAlone(List<Claim> claims) {
        int delaying = 0;
        int others = 0;
        for (Claim claim : claims) {
            Rule rule = claim.rule();
            if (!rule.maxDelay().isZero()) {
                delaying++;
            } else if (paces(rule)) {
                others++;
            }
        }
        if (delaying == 0 || delaying == 1 && others == 0) {
            return claims;
        }
        List<Claim> undelayed = new ArrayList<>(claims.size());
        for (Claim claim : claims) {
            undelayed.add(undelayed(claim));
        }
        return undelayed;
    }

    /**
     * Whether a rule counts a request at the time it decides it, so that a request held for
     * another rule's slot would pass later than this rule counted it: neither a shadow rule
     * (which refuses nothing) nor a concurrency rule (which counts requests in flight, not when).
     *
     * @param rule a rule
     * @return whether it paces the requests it admits
     */
    public static boolean paces(Rule rule) {
        return !rule.shadow() && !rule.algorithm().isConcurrency();
    }

    /**
     * The claim with its rule deciding now or never (no {@link dev.ratelimit.Rule#maxDelay()}).
     *
     * @param claim a claim
     * @return the same claim, or one of its rule without a max delay
     */
    public static Claim undelayed(Claim claim) {
        Rule rule = claim.rule();
        return rule.maxDelay().isZero() ? claim
                : Claim.of(rule.withMaxDelay(java.time.Duration.ZERO), claim.key(), claim.cost());
    }

    /**
     * The items of a request's list (its claims, or what is aligned with them) at the given
     * positions, in that order.
     *
     * @param items   the request's list
     * @param indexes the positions
     * @param <T>     the items' type
     * @return the picked items
     */
    public static <T> List<T> pick(List<T> items, List<Integer> indexes) {
        List<T> picked = new ArrayList<>(indexes.size());
        for (int i : indexes) {
            picked.add(items.get(i));
        }
        return picked;
    }

    /**
     * The claims of one request, checked once where it enters a limiter: a limiter it is passed
     * on to (the store under the resilient path) does not check them again.
     *
     * @param claims the claims
     * @return the same claims, in order, marked as checked
     * @throws IllegalArgumentException if the list is empty or names a rule twice
     */
    public static List<Claim> checked(List<Claim> claims) {
        if (claims instanceof CheckedClaims) {
            return claims;
        }
        return new CheckedClaims(claims);
    }

    /**
     * Some of a request's checked claims, still checked.
     *
     * @param checked the request's claims, from {@link #checked}
     * @param indexes the positions of those wanted: at least one
     * @return the claims at those positions, in that order
     */
    public static List<Claim> part(List<Claim> checked, List<Integer> indexes) {
        if (!(checked instanceof CheckedClaims) || indexes.isEmpty()) {
            throw new IllegalArgumentException("a part of checked claims, at least one, is needed");
        }
        return new CheckedClaims(pick(checked, indexes));
    }
}
