package dev.ratelimit;

import org.junit.jupiter.api.BeforeEach;

/**
 * The base of the limiter contracts: a fresh limiter per test on a clock the test moves by
 * hand. Subclasses say which limiter (in-process, or Valkey in client-clock mode).
 */
public abstract class ManualClockLimiterTest {

    protected ManualClock clock;
    protected RateLimiter limiter;

    /**
     * A limiter reading time from the given clock, with no state from earlier tests.
     *
     * @param clock the test's clock
     * @return a limiter
     */
    protected abstract RateLimiter newLimiter(ManualClock clock);

    /**
     * Where the clock starts.
     *
     * @return epoch ms
     */
    protected abstract long startMillis();

    @BeforeEach
    void createLimiter() {
        clock = new ManualClock(startMillis());
        limiter = newLimiter(clock);
    }
}
