package dev.ratelimit.it;

import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A reset gives a key its whole quota back, also the per-instance quota a {@code local} failure
 * policy keeps while Valkey cannot be reached: after it (the store's part failing, as documented,
 * with a RateLimitException), the in-process limiter lets the key's requests through again, for
 * every algorithm a local rule may have.
 */
class LocalPolicyResetTest {

    @Test
    void aResetWhileValkeyIsDownEmptiesTheLocalPolicysState() {
        ValkeySettings nowhere = ValkeySettings.of("redis://127.0.0.1:" + ValkeyServer.freePort())
                .withConnectTimeout(Duration.ofMillis(100));
        for (Rule rule : java.util.List.of(Rule.fixedWindow("lr-fw", 50, Duration.ofHours(1)),
                Rule.slidingLog("lr-sl", 50, Duration.ofHours(1)),
                Rule.slidingWindowCounter("lr-swc", 50, Duration.ofHours(1)),
                Rule.tokenBucket("lr-tb", 50, Duration.ofHours(1)), Rule.gcra("lr-gcra", 50, Duration.ofHours(1)))) {
            Rule local = rule.toBuilder().limit(2).build();
            try (RateLimiter limiter = ResilientRateLimiter.builder(nowhere)
                    .policy(rule, FailurePolicy.local(local)).build()) {
                for (int i = 0; i < 2; i++) {
                    Decision taken = limiter.acquire(rule, "k");
                    assertThat(taken.basis()).as("%s: decided in process", rule.name()).isEqualTo(Decision.Basis.LOCAL);
                    assertThat(taken.allowed()).as("%s: request %d of the local 2", rule.name(), i + 1).isTrue();
                }
                assertThat(limiter.acquire(rule, "k").allowed()).as("%s: the third, over the local 2", rule.name())
                        .isFalse();
                // The store's part fails, and says so; the fallback is reset all the same.
                assertThatThrownBy(() -> limiter.reset(rule, "k")).isInstanceOf(RateLimitException.class);
                assertThat(limiter.acquire(rule, "k").allowed()).as("%s: after the reset", rule.name()).isTrue();
            }
        }
    }
}
