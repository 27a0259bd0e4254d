package dev.ratelimit.resilient;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.config.MapSettingsSource;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * While the store cannot be reached, {@code on-failure=local} holds every caller of a rule to its
 * {@code local-limit}, whatever the caller's plan (README "Plans"): the plan's rule reaches the
 * fallback, and the fallback enforces the rule's own local shape.
 */
class FailurePolicyPlanTest {

    @Test
    void everyPlanGetsTheRulesLocalLimit() {
        RuleSettings api = SettingsReader.read(new MapSettingsSource(Map.of(
                "ratelimit.rules", "api",
                "ratelimit.rule.api.match", "/api/*",
                "ratelimit.rule.api.algorithm", "fixed-window",
                "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.on-failure", "local",
                "ratelimit.rule.api.local-limit", "4",
                "ratelimit.rule.api.plan", "role:pro,trial",
                "ratelimit.rule.api.plan.pro.limit", "1000",
                "ratelimit.rule.api.plan.trial.limit", "2"))).rule("api").orElseThrow();
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(new UnreachableStore())
                .fallback(LocalRateLimiter.withClock(clock, 100)).clock(clock)
                .policy(api.rule(), api.failurePolicy()).build()) {
            assertThat(allowedOf(limiter, api.ruleFor("pro", true), "pro-caller")).as("a pro caller").isEqualTo(4);
            assertThat(allowedOf(limiter, api.ruleFor("trial", true), "trial-caller")).as("a trial caller").isEqualTo(4);
            assertThat(allowedOf(limiter, api.ruleFor(null, true), "plain-caller")).as("a caller of no plan").isEqualTo(4);
        }
    }

    private static int allowedOf(RateLimiter limiter, Rule rule, String key) {
        int allowed = 0;
        for (int i = 0; i < 20; i++) {
            allowed += limiter.acquire(rule, key, 1).allowed() ? 1 : 0;
        }
        return allowed;
    }
}
