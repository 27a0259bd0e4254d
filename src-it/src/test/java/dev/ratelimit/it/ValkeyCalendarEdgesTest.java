package dev.ratelimit.it;

import dev.ratelimit.CalendarEdgesContract;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** Calendar windows at their edges on a real Valkey, in client-clock mode so time is the test's to move. */
@ExtendWith(ValkeyExtension.class)
class ValkeyCalendarEdgesTest extends CalendarEdgesContract {

    private final ValkeyServer valkey;

    ValkeyCalendarEdgesTest(ValkeyServer valkey) {
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
