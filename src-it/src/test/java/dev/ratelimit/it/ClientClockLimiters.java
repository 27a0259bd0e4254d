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
        return unflushed(valkey, clock);
    }

    /**
     * Another limiter on the same Valkey, as {@link #fresh} builds it, without emptying it: a
     * second instance beside one made fresh.
     *
     * @param valkey the server
     * @param clock  this instance's clock
     * @return a new limiter; the caller closes it
     */
    static ValkeyRateLimiter unflushed(ValkeyServer valkey, ManualClock clock) {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock)
                .build();
    }
}
