package dev.ratelimit.local;

import dev.ratelimit.CalendarEdgesContract;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;

/** Calendar windows at their edges on the in-process limiter, the fallback that must agree with the script. */
class LocalCalendarEdgesTest extends CalendarEdgesContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 10_000);
    }
}
