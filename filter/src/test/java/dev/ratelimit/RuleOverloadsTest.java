package dev.ratelimit;

import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Builders take the rule itself where they took its name: the same setting, and a rule the
 * setting cannot apply to is refused when written, naming the rule, not ignored at run time.
 */
class RuleOverloadsTest {

    private final Rule api = Rule.of("api", Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));

    @Test
    void aPolicyGivenByTheRuleIsTheRulesByName() {
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(LocalRateLimiter.create(100))
                .policy(api, FailurePolicy.closed()).build()) {
            assertThat(limiter.policy(api)).isEqualTo(FailurePolicy.closed());
            assertThat(limiter.policy(api)).isEqualTo(FailurePolicy.closed());
            assertThat(limiter.policy(Rule.of("other", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1))))
                    .isEqualTo(FailurePolicy.open());
        }
    }

    @Test
    void aLeaseOfARuleNoLeaseCanServeIsRefusedNamingTheRule() {
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder();
        assertThat(builder.localLease(api, 8, Duration.ofSeconds(1))).isSameAs(builder);
        Rule log = Rule.of("log", Algorithm.SLIDING_LOG, 10, Duration.ofMinutes(1));
        assertThatThrownBy(() -> builder.localLease(log, 8, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rule 'log' (sliding-log)");
        assertThatThrownBy(() -> builder.localLease(api.withCountRejected(true), 8, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rule 'api' (token-bucket, count-rejected)");
    }
}
