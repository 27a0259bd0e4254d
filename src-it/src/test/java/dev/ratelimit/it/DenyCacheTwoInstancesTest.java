package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Reservation;
import dev.ratelimit.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the application on one Valkey: one reserves units of a rule from code
 * ({@code limiter.reserve}) and gives them back, the other only acquires. The README leaves out
 * of the deny cache "any of a rule whose units are reserved to be given back (... or
 * {@code limiter.reserve} from code: units others reserved may be given back at any moment)".
 */
@ExtendWith(ValkeyExtension.class)
class DenyCacheTwoInstancesTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final Rule MAILS = Rule.of("mails", Algorithm.SLIDING_LOG, 1, Duration.ofHours(1));

    private final ValkeyServer valkey;

    DenyCacheTwoInstancesTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    /**
     * Promise: the deny cache never turns away a request the store would allow (a rule whose
     * units are reserved is not remembered). Instance two holds the one unit in a reservation;
     * instance one is rejected; instance two cancels; Valkey has room, instance one must see it.
     */
    @Test
    void aRuleReservedOnAnotherInstanceIsNotRememberedHere() {
        ManualClock clock = new ManualClock(T0);
        ValkeyRateLimiter one = ClientClockLimiters.fresh(valkey, clock);
        ValkeyRateLimiter two = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock).build();
        try (ResilientRateLimiter first = ResilientRateLimiter.builder(one).clock(clock).build();
             ResilientRateLimiter second = ResilientRateLimiter.builder(two).clock(clock).build()) {
            Reservation mail = second.reserve(MAILS, "user:1");
            assertThat(mail.allowed()).isTrue();
            clock.advance(10);
            assertThat(first.acquire(MAILS, "user:1").allowed()).as("while the unit is reserved").isFalse();
            assertThat(mail.cancel()).as("the mail never left: its unit goes back").containsExactly("mails");
            clock.advance(10);
            assertThat(one.peek(MAILS, "user:1", 1).allowed()).as("Valkey after the cancel").isTrue();

            assertThat(first.acquire(MAILS, "user:1").allowed())
                    .as("instance one, not a replay of the rejection the other's cancel made wrong").isTrue();
        }
    }
}
