package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
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
 * A caller whose plan changes between requests (the rule's own limit, then a plan's: one state
 * per rule and key, README "Plans"), on an instance that leases. The README's bound on units
 * withheld ("Local leases"): per rule and key, another instance holds at most
 * {@code local-lease} units for each plan the key was decided under (a lease per plan).
 * The clock stands still: no lease ends while the other instance
 * counts what it can still get.
 */
@ExtendWith(ValkeyExtension.class)
class LeasePlansWithheldTest {

    private static final int LEASE = 8;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeasePlansWithheldTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void anInstanceWithholdsAtMostOneLeasePerRuleAndKeyWhateverThePlans() {
        // The rule's own limit, and a plan's (a higher one, so that it never refuses here).
        Rule own = Rule.of("api", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        Rule pro = Rule.of("api", Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
        long admitted = 0;
        try (ValkeyRateLimiter holder = limiter(LEASE); ValkeyRateLimiter other = limiter(0)) {
            // Leases of 1, 2, 4, then one of 8 left whole, under each plan in turn.
            for (Rule plan : new Rule[] {own, pro}) {
                for (int i = 0; i < 12; i++) {
                    assertThat(holder.acquire(plan, "caller").allowed()).isTrue();
                    admitted++;
                }
            }
            long byOther = 0;
            while (byOther < 200 && other.acquire(own, "caller").allowed()) {
                byOther++;
            }
            long withheld = own.limit() - admitted - byOther;
            System.out.printf("admitted by the holder %d, by the other %d, withheld %d of %d%n", admitted, byOther,
                    withheld, own.limit());
            assertThat(withheld).as("units of the rule's own limit withheld by the holder, under two plans")
                    .isLessThanOrEqualTo(2 * LEASE);
        }
    }

    private ValkeyRateLimiter limiter(int lease) {
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock);
        return (lease > 0 ? builder.localLease(Rule.of("api", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1)), lease, Duration.ofMinutes(10)) : builder).build();
    }
}
