package dev.ratelimit.servlet;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Reservation;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.MapSettingsSource;
import dev.ratelimit.config.SettingsReader;
import org.junit.jupiter.api.Test;

import java.time.InstantSource;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refresh of the settings builds a new decision path; a request still in progress across it
 * gives its units back through the path it was decided on. The new path must not go on
 * replaying a rejection those units caused.
 */
class LimiterStackRefreshTest {

    @Test
    void unitsGivenBackAcrossARefreshClearTheNewPathsRejection() {
        FilterSettings settings = SettingsReader.read(new MapSettingsSource(Map.of(
                "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log",
                "ratelimit.rule.api.limit", "1",
                "ratelimit.rule.api.window", "1h")));
        Rule api = settings.rules().get(0).rule();
        LimiterStack stack = LimiterStack.start(settings, RateLimitListener.NONE, InstantSource.system(), "");
        try {
            Reservation inProgress = stack.limiter().reserve(api, "k");
            assertThat(inProgress.allowed()).isTrue();
            ResilientRateLimiter refreshed = stack.limiterFor(settings);
            assertThat(refreshed.acquire(api, "k").allowed()).as("the unit is held").isFalse();
            assertThat(inProgress.cancel()).containsExactly("api");
            assertThat(refreshed.acquire(api, "k").allowed()).as("given back: room again").isTrue();
        } finally {
            stack.stop();
        }
    }
}
