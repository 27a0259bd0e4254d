package dev.ratelimit.internal;

import dev.ratelimit.Claim;

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
