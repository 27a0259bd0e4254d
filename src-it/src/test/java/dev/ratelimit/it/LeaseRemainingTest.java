package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a decision served from a lease says remains, once another instance has taken what the
 * store held: a client that trusts {@code remaining} must not be refused before it used them.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseRemainingTest {

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseRemainingTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Promise asked for: remaining never promises units this instance cannot give. */
    @Test
    void remainingFromALeaseNeverPromisesWhatAnotherInstanceTook() {
        Rule rule = Rule.of("left", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        try (ValkeyRateLimiter holder = leasing(); ValkeyRateLimiter other = leasing()) {
            for (int i = 0; i < 8; i++) {
                assertThat(holder.acquire(rule, "k").allowed()).isTrue();
            }
            while (other.acquire(rule, "k").allowed()) {
                // The other instance takes all the store holds.
            }
            Decision promise = holder.acquire(rule, "k");
            assertThat(promise.allowed()).as("served from the holder's lease").isTrue();
            long given = 0;
            while (given <= promise.remaining() && holder.acquire(rule, "k").allowed()) {
                given++;
            }
            assertThat(given).as("requests allowed after a decision that said %d remain", promise.remaining())
                    .isEqualTo(promise.remaining());
        }
    }

    private ValkeyRateLimiter leasing() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease("left", 8, Duration.ofMillis(500)).build();
    }
}
