package dev.ratelimit.resilient;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A local policy's rule observes exactly when the rule it stands in for does, whatever shadow
 * flag it was built with: otherwise, while the store cannot decide, a shadow rule's local rule
 * that rejects keeps the request's other local rules from counting, and the request, which
 * that shadow rule cannot reject, passes uncounted.
 */
class FailurePolicyShadowTest {

    @Test
    void aShadowRulesLocalRuleNeverKeepsTheOthersFromCounting() {
        Rule observed = Rule.of("observed", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1)).withShadow(true);
        Rule enforced = Rule.of("enforced", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(new UnreachableStore())
                .fallback(LocalRateLimiter.withClock(clock, 100)).clock(clock)
                // Built enforcing, by mistake: it stands in for a shadow rule.
                .policy(observed, FailurePolicy.local(Rule.of("observed", Algorithm.FIXED_WINDOW, 1,
                        Duration.ofHours(1))))
                .policy(enforced, FailurePolicy.local(Rule.of("enforced", Algorithm.FIXED_WINDOW, 3,
                        Duration.ofHours(1))))
                .build()) {
            List<Claim> request = List.of(Claim.of(observed, "k"), Claim.of(enforced, "k"));
            int allowed = 0;
            for (int i = 0; i < 5; i++) {
                allowed += limiter.acquireAll(request).allowed() ? 1 : 0;
            }
            assertThat(allowed).as("the enforced rule's local limit of 3").isEqualTo(3);
            assertThat(limiter.peek(observed, "k", 1).allowed()).as("the shadow rule's local rule is full")
                    .isFalse();
        }
    }
}
