package dev.ratelimit.it;

import dev.ratelimit.ManualClock;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;

/** Valkey limiters on a test's clock, as the contract tests and the differential test use them. */
final class ClientClockLimiters {

    private ClientClockLimiters() {
    }

    /**
     * A limiter on an emptied Valkey, reading time from the test's clock, with a reply timeout
     * generous enough for a busy machine.
     *
     * @param valkey the server, flushed first
     * @param clock  the test's clock
     * @return a new limiter; the caller closes it
     */
    static ValkeyRateLimiter fresh(ValkeyServer valkey, ManualClock clock) {
        valkey.flushAll();
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock)
                .build();
    }
}
