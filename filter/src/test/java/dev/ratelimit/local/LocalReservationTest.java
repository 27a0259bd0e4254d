package dev.ratelimit.local;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.ReservationContract;

/** Reservations given back on the in-process limiter. */
class LocalReservationTest extends ReservationContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 10_000);
    }
}
