package dev.ratelimit.internal;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;

import java.util.List;

/**
 * A limiter that takes units as {@link RateLimiter#acquireAll} does (local leases and the deny
 * cache included) and keeps what it takes to give back, should another layer deciding the same
 * request refuse it: one request is all or nothing, whichever layer refuses it.
 *
 * <p>Unlike {@link RateLimiter#reserveAll}, whose units go back often (a rule counting by the
 * response's status), units taken so go back only when a request is refused after they were
 * taken, so the deny cache keeps the rules' rejections, and units served from a local lease go
 * back to that lease.
 */
public interface UndoableTakes {

    /**
     * Takes every claim at once, all or nothing, as {@link RateLimiter#acquireAll} does.
     *
     * @param claims the rules, keys and costs, at least one, no rule twice
     * @return what was taken; {@link Reservation#cancel} gives it back, {@link Reservation#commit} keeps it
     */
    Reservation takeAll(List<Claim> claims);

    /**
     * Takes with {@code limiter}'s own undoable take when it has one, else reserves.
     *
     * @param limiter any limiter
     * @param claims  the claims
     * @return what was taken
     */
    static Reservation takeAll(RateLimiter limiter, List<Claim> claims) {
        return limiter instanceof UndoableTakes takes ? takes.takeAll(claims) : limiter.reserveAll(claims);
    }
}
