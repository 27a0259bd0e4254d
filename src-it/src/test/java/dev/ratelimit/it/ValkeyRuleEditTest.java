package dev.ratelimit.it;

import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.RuleEditContract;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

/** Rule edits on a real Valkey, in client-clock mode so time is the test's to move. */
@ExtendWith(ValkeyExtension.class)
class ValkeyRuleEditTest extends RuleEditContract {

    private final ValkeyServer valkey;

    ValkeyRuleEditTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        valkey.flushAll();
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock)
                .build();
    }

    @AfterEach
    void closeLimiter() {
        limiter.close();
    }
}
