package dev.ratelimit.it;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.DelayContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** Requests admitted for a slot to come, on a real Valkey, in client-clock mode so time is the test's to move. */
@ExtendWith(ValkeyExtension.class)
class ValkeyDelayTest extends DelayContract {

    private final ValkeyServer valkey;

    ValkeyDelayTest(ValkeyServer valkey) {
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
