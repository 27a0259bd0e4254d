package dev.ratelimit.it;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.RateLimiterContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;


/**
 * The algorithm contract (exact numbers at window edges, recovery, cost, peek, reset,
 * all-or-nothing, count-rejected) on a real Valkey, in client-clock mode so time is the
 * test's to move.
 */
@ExtendWith(ValkeyExtension.class)
class ValkeyContractTest extends RateLimiterContract {

    private final ValkeyServer valkey;

    ValkeyContractTest(ValkeyServer valkey) {
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
