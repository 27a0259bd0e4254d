package dev.ratelimit.local;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.RuleEditContract;

/** Rule edits on the in-process limiter. */
class LocalRuleEditTest extends RuleEditContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 10_000);
    }
}
