package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A leased rule edited (same name, a lower limit; or another window) while two instances hold
 * leases of it: the edited rule grants nothing beyond itself, counting the units the old rule
 * took (leases included) in full (README, "When a rule is edited"). The clock stands still.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseRuleEditTest {

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseRuleEditTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "TOKEN_BUCKET", "GCRA"})
    void aLoweredLimitGrantsNothingBeyondItself(Algorithm algorithm) {
        Rule before = Rule.of("edited", algorithm, 100, Duration.ofHours(1));
        Rule after = Rule.of("edited", algorithm, 30, Duration.ofHours(1));
        check(before, after, 30);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "TOKEN_BUCKET", "GCRA"})
    void aShorterWindowGrantsNothingBeyondItself(Algorithm algorithm) {
        Rule before = Rule.of("edited", algorithm, 100, Duration.ofHours(1));
        Rule after = Rule.of("edited", algorithm, 30, Duration.ofMinutes(1));
        check(before, after, 30);
    }

    private void check(Rule before, Rule after, long capacityAfter) {
        long first = 0;
        long second = 0;
        try (ValkeyRateLimiter a = limiter(); ValkeyRateLimiter b = limiter()) {
            // Each instance grows a lease of the old rule: 1, 2, 4, 8 (some of the last left).
            for (ValkeyRateLimiter each : List.of(a, b)) {
                for (int i = 0; i < 10; i++) {
                    assertThat(each.acquire(before, "k").allowed()).isTrue();
                    first++;
                }
            }
            for (int i = 0; i < 60; i++) {
                if ((i % 2 == 0 ? a : b).acquire(after, "k").allowed()) {
                    second++;
                }
            }
        }
        System.out.printf("%s: %d under the old rule, %d under the edited one (capacity %d)%n",
                before.algorithm(), first, second, capacityAfter);
        assertThat(second).as("allowed by the edited rule after %d under the old", first)
                .isLessThanOrEqualTo(Math.max(0, capacityAfter - first));
    }

    private ValkeyRateLimiter limiter() {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(Rule.of("edited", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1)), 8, Duration.ofMinutes(10)).build();
    }
}
