package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fixed window's leases on the server's clock (no client clock): leases are timed on the
 * limiter's monotonic clock and end with the window the server counted. An admission is put in a
 * window only when the wall-clock times before and after its call (the server runs on this
 * machine) fall in that same window; those alone must not exceed the limit.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseServerClockTest {

    private static final long WINDOW = 500;
    private static final long LIMIT = 20;

    private final ValkeyServer valkey;

    LeaseServerClockTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Promise: never more than the limit in one server window, whatever the lease time. */
    @Test
    void everyServerWindowAdmitsAtMostItsLimit() throws Exception {
        Rule rule = Rule.of("server", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofMillis(WINDOW));
        ConcurrentLinkedQueue<long[]> admitted = new ConcurrentLinkedQueue<>();
        List<ValkeyRateLimiter> limiters = List.of(leasing(rule), leasing(rule), leasing(rule));
        ExecutorService pool = Executors.newFixedThreadPool(6);
        long end = System.currentTimeMillis() + 3_000;
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                ValkeyRateLimiter limiter = limiters.get(t % 3);
                done.add(pool.submit(() -> {
                    while (System.currentTimeMillis() < end) {
                        long before = System.currentTimeMillis();
                        boolean allowed = limiter.acquire(rule, "hot").allowed();
                        long after = System.currentTimeMillis();
                        if (allowed) {
                            admitted.add(new long[] {before, after});
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> each : done) {
                each.get();
            }
        } finally {
            pool.shutdownNow();
            limiters.forEach(ValkeyRateLimiter::close);
        }
        Map<Long, Long> perWindow = new TreeMap<>();
        for (long[] each : admitted) {
            if (each[0] / WINDOW == each[1] / WINDOW) {
                perWindow.merge(each[0] / WINDOW, 1L, Long::sum);
            }
        }
        assertThat(perWindow).as("windows seen").hasSizeGreaterThan(3);
        perWindow.forEach((window, count) -> assertThat(count).as("admitted in window %d", window)
                .isLessThanOrEqualTo(LIMIT));
    }

    private ValkeyRateLimiter leasing(Rule rule) {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .localLease(rule, 8, Duration.ofMillis(300)).build();
    }
}
