package dev.ratelimit.it;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.RefundFuzzContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** The refund fuzz on a real Valkey, in client-clock mode so time is the test's to move. */
@ExtendWith(ValkeyExtension.class)
class ValkeyRefundFuzzTest extends RefundFuzzContract {

    private final ValkeyServer valkey;

    ValkeyRefundFuzzTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return ClientClockLimiters.fresh(valkey, clock);
    }

    @Override
    protected int seeds() {
        return Integer.getInteger("refund.fuzz.seeds", 150);
    }

    @AfterEach
    void closeLimiter() {
        limiter.close();
    }
}
