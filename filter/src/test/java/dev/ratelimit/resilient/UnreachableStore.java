package dev.ratelimit.resilient;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;

import java.util.List;

/** A store that cannot be reached: every call fails as a lost connection does, for the failure policies to answer. */
final class UnreachableStore implements RateLimiter {

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        throw new RateLimitException("unreachable", null);
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        throw new RateLimitException("unreachable", null);
    }

    @Override
    public void reset(Rule rule, String key) {
        throw new RateLimitException("unreachable", null);
    }

    @Override
    public void close() {
    }
}
