package dev.ratelimit.local;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.RateLimiterContract;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The in-process limiter: the shared contract, plus what only it has (sweeping, its memory bound). */
class LocalRateLimiterTest extends RateLimiterContract {

    @Override
    protected RateLimiter newLimiter(ManualClock clock) {
        return LocalRateLimiter.withClock(clock, 10_000);
    }

    @Test
    void expiredStateIsSwept() {
        LocalRateLimiter local = (LocalRateLimiter) limiter;
        Rule rule = Rule.of("sweep", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1));
        for (int i = 0; i < 2_000; i++) {
            local.acquire(rule, "client-" + i);
        }
        assertThat(local.size()).isEqualTo(2_000);
        clock.advance(1_000);
        for (int i = 0; i < 1_100; i++) {
            local.acquire(rule, "fresh");
        }
        assertThat(local.size()).isLessThan(2_000);
    }

    @Test
    void aFloodOfDistinctKeysNeverHoldsMoreThanMaxKeys() {
        LocalRateLimiter bounded = LocalRateLimiter.withClock(clock, 1_000);
        Rule rule = Rule.of("flood", Algorithm.SLIDING_LOG, 5, Duration.ofHours(1));
        for (int i = 0; i < 100_000; i++) {
            bounded.acquire(rule, "ip:" + i);
        }
        assertThat(bounded.size()).isEqualTo(1_000);
        // The most recent keys are the ones kept.
        assertThat(bounded.peek(rule, "ip:99999", 1).remaining()).isEqualTo(4);
        assertThat(bounded.peek(rule, "ip:0", 1).remaining()).isEqualTo(5);
    }

    @Test
    void countingRejectedRequestsNeverGrowsTheLogPastTheLimit() {
        SlidingLogState state = new SlidingLogState();
        Rule rule = Rule.of("log", Algorithm.SLIDING_LOG, 3, Duration.ofMinutes(1)).withCountRejected(true);
        for (int i = 0; i < 1_000; i++) {
            state.take(T0 + i, rule, 1, true, true, i + 1);
        }
        assertThat(state.size()).isEqualTo(3);
    }

    @Test
    void threadsTogetherGetExactlyTheLimit() throws Exception {
        Rule rule = Rule.of("threads", Algorithm.GCRA, 500, Duration.ofHours(1));
        AtomicInteger allowed = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 125; i++) {
                        if (limiter.acquire(rule, "shared").allowed()) {
                            allowed.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(allowed.get()).isEqualTo(500);
    }
}
