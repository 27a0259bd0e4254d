package dev.ratelimit.internal;

import dev.ratelimit.Claim;

import java.util.AbstractList;
import java.util.List;

/**
 * Claims {@link Claims#check} has passed, checked once where a request entered a limiter: a copy,
 * so that nothing changes them after.
 */
class CheckedClaims extends AbstractList<Claim> {

    private final List<Claim> claims;

    /** Checks the claims and keeps a copy of them, as they are decided ({@link Claims#delayingAlone}). */
    CheckedClaims(List<Claim> claims) {
        Claims.check(claims);
        this.claims = List.copyOf(Claims.delayingAlone(claims));
    }

    @Override
    public Claim get(int index) {
        return claims.get(index);
    }

    @Override
    public int size() {
        return claims.size();
    }
}
