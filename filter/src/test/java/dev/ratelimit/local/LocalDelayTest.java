package dev.ratelimit.local;

import dev.ratelimit.DelayContract;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;

/** Requests admitted for a slot to come on the in-process limiter. */
class LocalDelayTest extends DelayContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 10_000);
    }
}
