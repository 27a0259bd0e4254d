package dev.ratelimit.valkey;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class CircuitBreakerTest {

    private final AtomicLong nanos = new AtomicLong(1_000);
    private final List<Boolean> changes = new ArrayList<>();
    private final CircuitBreaker breaker = new CircuitBreaker(3, Duration.ofSeconds(2), nanos::get,
            new RateLimitListener() {
                @Override
                public void onBreakerChange(boolean open) {
                    changes.add(open);
                }
            });

    @Test
    void opensAfterConsecutiveFailuresProbesOnceThenCloses() {
        for (int i = 0; i < 3; i++) {
            assertThat(breaker.allowCall()).isTrue();
            breaker.failed();
        }
        assertThat(breaker.isOpen()).isTrue();
        assertThat(breaker.allowCall()).isFalse();
        nanos.addAndGet(Duration.ofMillis(1_999).toNanos());
        assertThat(breaker.allowCall()).isFalse();
        nanos.addAndGet(Duration.ofMillis(1).toNanos());
        assertThat(breaker.allowCall()).as("the probe").isTrue();
        assertThat(breaker.allowCall()).as("only one probe at a time").isFalse();
        breaker.succeeded();
        assertThat(breaker.isOpen()).isFalse();
        assertThat(breaker.allowCall()).isTrue();
        assertThat(changes).containsExactly(true, false);
    }

    @Test
    void aFailedProbeOpensItAgainAndASuccessInBetweenResetsTheCount() {
        breaker.failed();
        breaker.failed();
        breaker.succeeded();
        breaker.failed();
        breaker.failed();
        assertThat(breaker.isOpen()).isFalse();
        breaker.failed();
        assertThat(breaker.isOpen()).isTrue();
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(breaker.allowCall()).isTrue();
        breaker.failed();
        assertThat(breaker.allowCall()).isFalse();
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(breaker.allowCall()).isTrue();
        assertThat(changes).containsExactly(true);
    }

    @Test
    void zeroFailuresDisablesIt() {
        CircuitBreaker disabled = new CircuitBreaker(0, Duration.ofSeconds(1), nanos::get, RateLimitListener.NONE);
        for (int i = 0; i < 100; i++) {
            disabled.failed();
        }
        assertThat(disabled.allowCall()).isTrue();
    }
}
