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
 * Two instances of the application on one Valkey: one reserves units of a rule from code
 * ({@code limiter.reserve}) and gives them back, or resets the key; the other only acquires,
 * and its deny cache cannot see either. The README's promise: room made on another instance is
 * seen within {@code ratelimit.deny-cache.max-hold}, never later.
 */
@ExtendWith(ValkeyExtension.class)
class DenyCacheTwoInstancesTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final Rule MAILS = Rule.of("mails", Algorithm.SLIDING_LOG, 1, Duration.ofHours(1));
    private static final Duration HOLD = Duration.ofMillis(500);

    private final ValkeyServer valkey;

    DenyCacheTwoInstancesTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    /**
     * Instance two holds the one unit in a reservation; instance one is rejected (an hour's
     * retry-after); instance two cancels; Valkey has room, and instance one sees it once the
     * hold has passed, not after the hour.
     */
    @Test
    void roomGivenBackOnAnotherInstanceIsSeenHereWithinTheHold() {
        ManualClock clock = new ManualClock(T0);
        ValkeyRateLimiter one = ClientClockLimiters.fresh(valkey, clock);
        try (ResilientRateLimiter first = ResilientRateLimiter.builder(one).clock(clock).denyCacheHold(HOLD).build();
             ResilientRateLimiter second = secondInstance(clock)) {
            Reservation mail = second.reserve(MAILS, "user:1");
            assertThat(mail.allowed()).isTrue();
            clock.advance(10);
            assertThat(first.acquire(MAILS, "user:1").allowed()).as("while the unit is reserved").isFalse();
            assertThat(mail.cancel()).as("the mail never left: its unit goes back").containsExactly("mails");
            clock.advance(10);
            assertThat(one.peek(MAILS, "user:1", 1).allowed()).as("Valkey after the cancel").isTrue();

            clock.advance(HOLD.toMillis() - 20);
            assertThat(first.acquire(MAILS, "user:1").allowed()).as("instance one within the hold: a replay").isFalse();
            clock.advance(10);
            assertThat(first.acquire(MAILS, "user:1").allowed())
                    .as("instance one once the hold has passed, not a replay of the rejection the other's cancel made wrong")
                    .isTrue();
        }
    }

    /** The same with a reset made on the other instance (a support engineer unblocking a user). */
    @Test
    void aResetOnAnotherInstanceIsSeenHereWithinTheHold() {
        ManualClock clock = new ManualClock(T0);
        ValkeyRateLimiter one = ClientClockLimiters.fresh(valkey, clock);
        try (ResilientRateLimiter first = ResilientRateLimiter.builder(one).clock(clock).denyCacheHold(HOLD).build();
             ResilientRateLimiter second = secondInstance(clock)) {
            assertThat(first.acquire(MAILS, "user:2").allowed()).isTrue();
            assertThat(first.acquire(MAILS, "user:2").allowed()).as("the hour's one mail is spent").isFalse();
            second.reset(MAILS, "user:2");
            clock.advance(HOLD.toMillis());
            assertThat(first.acquire(MAILS, "user:2").allowed()).as("after the other instance's reset and the hold")
                    .isTrue();
        }
    }

    /** Another application server on the same Valkey: its own client, breaker and deny cache. */
    private ResilientRateLimiter secondInstance(ManualClock clock) {
        ValkeyRateLimiter two = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock).build();
        return ResilientRateLimiter.builder(two).clock(clock).build();
    }
}
