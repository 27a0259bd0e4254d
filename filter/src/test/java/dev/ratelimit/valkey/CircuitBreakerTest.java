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
        for (int i = 0; i < 6; i++) {
            assertThat(breaker.isOpen()).as("only %d calls in the last second: too few to tell", i).isFalse();
            assertThat(breaker.allowCall()).isTrue();
            breaker.failed();
        }
        assertThat(breaker.isOpen()).as("3 in a row, and 6 of 6 calls of the last second").isTrue();
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

    /** A busy server: calls time out in bursts while most are answered. That is not a dead server. */
    @Test
    void burstsOfFailuresAmongMostlyAnsweredCallsNeverOpenIt() {
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 12; i++) {
                breaker.succeeded();
            }
            for (int i = 0; i < 8; i++) { // eight callers waiting on the same slow moment
                breaker.failed();
            }
            nanos.addAndGet(Duration.ofMillis(50).toNanos());
        }
        assertThat(breaker.isOpen()).as("40% of calls failed").isFalse();
        // Then it dies: within the second every call fails, and soon most of the second's calls have.
        nanos.addAndGet(Duration.ofMillis(600).toNanos());
        for (int i = 0; i < 60; i++) {
            breaker.failed();
        }
        assertThat(breaker.isOpen()).as("most calls of the last second failed").isTrue();
        assertThat(changes).containsExactly(true);
    }
}
