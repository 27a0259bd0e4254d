package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Reservation;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases of a concurrency rule taken by two instances on one Valkey: a lease whose timeout passed
 * before its request settled is reclaimed by the other instance's request, and the late settle
 * releases nothing of the lease taken since, nor does a reset in between.
 */
@ExtendWith(ValkeyExtension.class)
class TwoInstancesLeaseTest {

    private static final long T0 = 1_700_000_040_000L;
    private static final Rule REPORTS = Rule.of("reports", Algorithm.CONCURRENCY, 1, Duration.ofSeconds(1));

    private final ValkeyServer valkey;

    TwoInstancesLeaseTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    /** Promise: leases of one call are never released by another call's settle (timeout passed, reset). */
    @Test
    void aLateSettleReleasesNothingTheOtherInstanceTookSince() {
        ManualClock clock = new ManualClock(T0);
        ValkeyRateLimiter one = ClientClockLimiters.fresh(valkey, clock);
        ValkeyRateLimiter two = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock).build();
        try (ResilientRateLimiter first = ResilientRateLimiter.builder(one).clock(clock).build();
             ResilientRateLimiter second = ResilientRateLimiter.builder(two).clock(clock).build()) {
            Reservation slow = first.reserve(REPORTS, "u");
            assertThat(slow.allowed()).isTrue();
            clock.advance(1_500);
            Reservation next = second.reserve(REPORTS, "u");
            assertThat(next.allowed()).as("the slow lease timed out").isTrue();
            assertThat(slow.cancel()).as("the slow request ends late").isEmpty();
            assertThat(first.acquire(REPORTS, "u").allowed()).as("the other's lease still held").isFalse();

            first.reset(REPORTS, "u");
            Reservation third = first.reserve(REPORTS, "u");
            assertThat(third.allowed()).isTrue();
            assertThat(next.commit()).isTrue();
            assertThat(second.reserve(REPORTS, "u").allowed()).as("the lease taken after the reset held").isFalse();
        }
    }
}
