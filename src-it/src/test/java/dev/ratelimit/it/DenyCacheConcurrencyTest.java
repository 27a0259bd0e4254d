package dev.ratelimit.it;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deny cache never remembers an in-flight limit's refusal: its retry-after is only the
 * permit timeout, and a permit comes back whenever the work holding it ends, on any instance.
 * Two instances on one Valkey, a limit of one request in progress, a deny cache that would hold
 * a refusal for a minute: once the other instance's work ends, the next request passes.
 */
@ExtendWith(ValkeyExtension.class)
class DenyCacheConcurrencyTest {

    private final ValkeyServer server;

    DenyCacheConcurrencyTest(ValkeyServer server) {
        this.server = server;
    }

    @Test
    void aPermitReleasedElsewhereIsSeenAtOnce() {
        Rule reports = Rule.concurrency("dc-reports", 1, Duration.ofMinutes(5));
        ValkeySettings valkey = ValkeySettings.of(server.url()).withSocketTimeout(Duration.ofSeconds(2));
        try (RateLimiter holder = ResilientRateLimiter.builder(valkey).build();
             RateLimiter other = ResilientRateLimiter.builder(valkey).denyCacheHold(Duration.ofMinutes(1)).build()) {
            for (int round = 0; round < 3; round++) {
                // acquire, not reserve: the deny cache never remembers a rule requests reserve.
                String key = "tenant:" + round + ":" + System.nanoTime();
                Reservation work = holder.reserve(reports, key);
                assertThat(work.allowed()).as("round %d: the holder's work starts", round).isTrue();
                assertThat(other.acquire(reports, key).allowed()).as("round %d: one in progress already", round)
                        .isFalse();
                work.commit();
                assertThat(other.acquire(reports, key).allowed())
                        .as("round %d: the permit came back, released on the other instance", round).isTrue();
            }
        }
    }
}
