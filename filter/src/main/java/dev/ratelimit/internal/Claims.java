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
     * Checks the claims of one request.
     *
     * @param claims the claims
     * @throws IllegalArgumentException if the list is empty or names a rule twice
     */
    public static void check(List<Claim> claims) {
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
}
