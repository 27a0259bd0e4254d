package dev.ratelimit.valkey.connection;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.ratelimit.valkey.connection.CircuitBreaker.Permit.CALL;
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
            CircuitBreaker.Permit permit = breaker.allowCall();
            assertThat(permit.allowed()).isTrue();
            breaker.failed(permit);
        }
        assertThat(breaker.isOpen()).as("3 in a row, and 6 of 6 calls of the last second").isTrue();
        assertThat(breaker.allowCall().allowed()).isFalse();
        nanos.addAndGet(Duration.ofMillis(1_999).toNanos());
        assertThat(breaker.allowCall().allowed()).isFalse();
        nanos.addAndGet(Duration.ofMillis(1).toNanos());
        assertThat(breaker.allowCall().allowed()).as("the probe").isTrue();
        assertThat(breaker.allowCall().allowed()).as("only one probe at a time").isFalse();
        breaker.succeeded();
        assertThat(breaker.isOpen()).isFalse();
        assertThat(breaker.allowCall()).isSameAs(CALL);
        assertThat(changes).containsExactly(true, false);
    }

    @Test
    void aFailedProbeOpensItAgainAndASuccessInBetweenResetsTheCount() {
        breaker.failed(CALL);
        breaker.failed(CALL);
        breaker.succeeded();
        breaker.failed(CALL);
        breaker.failed(CALL);
        assertThat(breaker.isOpen()).isFalse();
        breaker.failed(CALL);
        assertThat(breaker.isOpen()).isTrue();
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        CircuitBreaker.Permit probe = breaker.allowCall();
        assertThat(probe.allowed()).isTrue();
        breaker.failed(probe);
        assertThat(breaker.allowCall().allowed()).isFalse();
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(breaker.allowCall().allowed()).isTrue();
        assertThat(changes).containsExactly(true);
    }

    @Test
    void zeroFailuresDisablesIt() {
        CircuitBreaker disabled = new CircuitBreaker(0, Duration.ofSeconds(1), nanos::get, RateLimitListener.NONE);
        for (int i = 0; i < 100; i++) {
            disabled.failed(CALL);
        }
        assertThat(disabled.allowCall()).isSameAs(CALL);
    }

    /** A busy server: calls time out in bursts while most are answered. That is not a dead server. */
    @Test
    void burstsOfFailuresAmongMostlyAnsweredCallsNeverOpenIt() {
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 12; i++) {
                breaker.succeeded();
            }
            for (int i = 0; i < 8; i++) { // eight callers waiting on the same slow moment
                breaker.failed(CALL);
            }
            nanos.addAndGet(Duration.ofMillis(50).toNanos());
        }
        assertThat(breaker.isOpen()).as("40% of calls failed").isFalse();
        // Then it dies: within the second every call fails, and soon most of the second's calls have.
        nanos.addAndGet(Duration.ofMillis(600).toNanos());
        for (int i = 0; i < 60; i++) {
            breaker.failed(CALL);
        }
        assertThat(breaker.isOpen()).as("most calls of the last second failed").isTrue();
        assertThat(changes).containsExactly(true);
    }

    /**
     * Every clock read while a failed probe is reported is a moment at which another thread
     * could ask to call: at none of them may a call go out, or two probes go out in one open
     * period (the probe's failure first cleared "probing", then set the new open-until).
     */
    @Test
    void noCallGoesOutWhileAFailedProbeIsBeingReported() {
        AtomicBoolean reporting = new AtomicBoolean();
        List<CircuitBreaker.Permit> askedMeanwhile = new ArrayList<>();
        AtomicReference<CircuitBreaker> asked = new AtomicReference<>();
        CircuitBreaker reported = new CircuitBreaker(3, Duration.ofSeconds(2), () -> {
            // Asks once per clock read; not again from the clock reads of that question.
            if (reporting.compareAndSet(true, false)) {
                askedMeanwhile.add(asked.get().allowCall());
                reporting.set(true);
            }
            return nanos.get();
        }, RateLimitListener.NONE);
        asked.set(reported);
        for (int i = 0; i < 6; i++) {
            reported.failed(reported.allowCall());
        }
        for (int round = 0; round < 3; round++) {
            int period = round;
            nanos.addAndGet(Duration.ofSeconds(2).toNanos());
            CircuitBreaker.Permit probe = reported.allowCall();
            assertThat(probe.allowed()).as("the probe of period %d", period).isTrue();
            reporting.set(true);
            reported.failed(probe);
            reporting.set(false);
            assertThat(askedMeanwhile).as("calls asked for while the probe's failure was reported").isNotEmpty()
                    .allSatisfy(permit -> assertThat(permit.allowed()).as("a second call in period %d", period)
                            .isFalse());
            askedMeanwhile.clear();
            assertThat(reported.allowCall().allowed()).as("open again after the failed probe").isFalse();
        }
    }

    /** A call let through before the breaker opened may fail while the probe is out: that is not the probe. */
    @Test
    void aCallFailingLateLetsNoSecondProbeOut() {
        CircuitBreaker.Permit slow = breaker.allowCall();
        assertThat(slow).as("a slow call, sent while closed").isSameAs(CALL);
        for (int i = 0; i < 6; i++) {
            breaker.failed(breaker.allowCall());
        }
        assertThat(breaker.isOpen()).isTrue();
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        CircuitBreaker.Permit probe = breaker.allowCall();
        assertThat(probe.allowed()).as("the probe").isTrue();
        breaker.failed(slow); // at last
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(breaker.allowCall().allowed()).as("a second probe while the first is still out").isFalse();
        breaker.failed(probe);
        assertThat(breaker.allowCall().allowed()).as("open again after the failed probe").isFalse();
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(breaker.allowCall().allowed()).as("the next period's probe").isTrue();
        assertThat(changes).containsExactly(true);
    }
}
