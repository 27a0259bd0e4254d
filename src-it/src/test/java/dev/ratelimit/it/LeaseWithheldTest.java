package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's bound on units withheld (section "Local leases"): per rule and key, another
 * instance holds at most {@code local-lease} units (a fixed window has no margin). Measured with
 * the clock standing still, so that no lease ends and nothing goes back while the other instance
 * counts what it can still get.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseWithheldTest {

    private static final int LEASE = 16;
    private static final long LIMIT = 5_000;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseWithheldTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /**
     * Promise: one instance, however many threads ask for one hot key, withholds at most
     * {@code local-lease} units from the others. Threads that find the key's lease empty at once
     * each take a new one; a lease replaced while it still holds units keeps them until its
     * time, beside the new one.
     */
    @RepeatedTest(3)
    void manyThreadsOfOneInstanceWithholdAtMostOneLease() throws Exception {
        Rule rule = Rule.of("held", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));
        try (ValkeyRateLimiter holder = leasing(); ValkeyRateLimiter plain = plain()) {
            long admitted = hammer(holder, rule, 8, 150);
            long other = 0;
            while (plain.acquire(rule, "hot").allowed()) {
                other++;
            }
            long withheld = LIMIT - admitted - other;
            assertThat(withheld).as("units withheld by the holder (admitted %d, the other got %d)", admitted, other)
                    .isBetween(0L, (long) LEASE);
        }
    }

    private ValkeyRateLimiter leasing() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease("held", LEASE, Duration.ofMillis(500)).build();
    }

    private ValkeyRateLimiter plain() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).build();
    }

    /** Threads that start together, each asking {@code each} times for the hot key. */
    private static long hammer(ValkeyRateLimiter limiter, Rule rule, int threads, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        try {
            List<Callable<Long>> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                tasks.add(() -> {
                    start.await();
                    long allowed = 0;
                    for (int i = 0; i < each; i++) {
                        allowed += limiter.acquire(rule, "hot").allowed() ? 1 : 0;
                    }
                    return allowed;
                });
            }
            long total = 0;
            for (Future<Long> result : pool.invokeAll(tasks)) {
                total += result.get();
            }
            return total;
        } finally {
            pool.shutdownNow();
        }
    }
}
