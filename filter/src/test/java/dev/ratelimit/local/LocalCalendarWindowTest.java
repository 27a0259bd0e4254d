package dev.ratelimit.local;

import dev.ratelimit.CalendarWindowContract;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;

/** Calendar windows on the in-process limiter, the fallback that must agree with the script. */
class LocalCalendarWindowTest extends CalendarWindowContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 10_000);
    }
}
