package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The harness itself, as the failure tests will use it: a server that can be stopped,
 * restarted on the same port and paused; and a limiter that goes on working across a restart
 * (Valkey forgets loaded scripts when it restarts).
 */
@ExtendWith(ValkeyExtension.class)
class ValkeyServerTest {

    private final ValkeyServer valkey;

    ValkeyServerTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void restartsOnTheSamePortAndTheLimiterReloadsItsScript() {
        Rule rule = Rule.of("restart", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2))).build()) {
            assertThat(limiter.acquire(rule, "k").remaining()).isEqualTo(4);

            valkey.stop();
            assertThatThrownBy(() -> limiter.acquire(rule, "k")).isInstanceOf(RateLimitException.class);

            valkey.start();
            // The restarted server is empty and knows no script: the limiter loads it again.
            assertThat(limiter.acquire(rule, "k").remaining()).isEqualTo(4);
        }
    }

    @Test
    void pauseHoldsClientsForItsDuration() {
        try (Jedis jedis = valkey.connect()) {
            valkey.pause(Duration.ofMillis(300));
            long start = System.nanoTime();
            assertThat(jedis.ping()).isEqualTo("PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        }
    }
}
