package dev.ratelimit.it;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.ReservationContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** Reservations given back on a real Valkey, in client-clock mode so time is the test's to move. */
@ExtendWith(ValkeyExtension.class)
class ValkeyReservationTest extends ReservationContract {

    private final ValkeyServer valkey;

    ValkeyReservationTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return ClientClockLimiters.fresh(valkey, clock);
    }

    @AfterEach
    void closeLimiter() {
        limiter.close();
    }
}
