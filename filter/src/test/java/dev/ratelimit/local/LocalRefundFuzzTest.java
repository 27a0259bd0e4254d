package dev.ratelimit.local;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.RefundFuzzContract;

/** The refund fuzz on the in-process limiter. */
class LocalRefundFuzzTest extends RefundFuzzContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 100_000);
    }

    @Override
    protected int seeds() {
        return Integer.getInteger("refund.fuzz.seeds", 1_000);
    }
}
