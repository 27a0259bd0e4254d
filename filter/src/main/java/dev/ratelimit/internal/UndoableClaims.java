package dev.ratelimit.internal;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimiter;

import java.util.List;

/**
 * Claims one layer of a request takes to keep unless another layer refuses the request: one
 * request is all or nothing, whichever layer refuses it. Given to {@link RateLimiter#reserveAll},
 * the limiters of this library take them as {@link RateLimiter#acquireAll} does (local leases
 * and the deny cache included: units taken so go back only when a request is refused after they
 * were taken, rarely, unlike a reservation's, which go back by the work's outcome, often) and
 * keep what they took to give back. Any other limiter reserves them.
 *
 * <p>A list of its own rather than a method, so that the public limiters show no internal type.
 */
public final class UndoableClaims extends CheckedClaims {

    private UndoableClaims(List<Claim> claims) {
        // Checked here, once: the limiters they are given to do not check them again.
        super(claims);
    }

    /**
     * The claims, marked to be taken undoably.
     *
     * @param claims the claims
     * @return the same claims, in order
     * @throws IllegalArgumentException if the list is empty or names a rule twice
     */
    public static UndoableClaims of(List<Claim> claims) {
        return claims instanceof UndoableClaims undoable ? undoable : new UndoableClaims(claims);
    }

    /**
     * Whether a limiter's claims are to be taken undoably.
     *
     * @param claims claims given to {@link RateLimiter#reserveAll}
     * @return true for claims of {@link #of}
     */
    public static boolean marked(List<Claim> claims) {
        return claims instanceof UndoableClaims;
    }
}
