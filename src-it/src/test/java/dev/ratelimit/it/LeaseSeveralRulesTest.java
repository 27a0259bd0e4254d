package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request with a leased rule and a rule that is not, the second the tighter: all or nothing, so
 * the leased rule counts exactly the requests that were allowed, once its leases go back.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseSeveralRulesTest {

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseSeveralRulesTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Promise: a request the unleased rule rejects takes nothing of the leased rule, from a lease or the store. */
    @Test
    void theLeasedRuleCountsOnlyTheAllowedRequests() {
        Rule leased = Rule.of("leased", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        Rule tight = Rule.of("tight", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));
        long allowed = 0;
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(leased, 8, Duration.ofMillis(500)).build()) {
            for (int i = 0; i < 30; i++) {
                // The leased rule alone now and then, so that its lease grows and serves.
                if (i % 3 == 0) {
                    assertThat(limiter.acquire(leased, "k").allowed()).isTrue();
                    allowed++;
                }
                if (limiter.acquireAll(List.of(Claim.of(leased, "k", 2), Claim.of(tight, "k"))).allowed()) {
                    allowed += 2;
                }
            }
        }
        // Closed: its leases went back, and the window still runs (the clock stood still).
        try (ValkeyRateLimiter plain = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock).build()) {
            assertThat(allowed).as("units of the leased rule allowed").isEqualTo(10 + 2 * 5);
            assertThat(plain.peek(leased, "k", 1).remaining()).as("what the leased rule still has").isEqualTo(100 - allowed);
        }
    }
}
