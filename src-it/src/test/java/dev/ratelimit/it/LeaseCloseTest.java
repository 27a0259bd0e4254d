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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code close()} while threads still ask (an undeploy under load): the README promises that
 * closing gives back what the limiter holds, so with the clock standing still another instance
 * then gets every unit that was not admitted.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseCloseTest {

    private static final long LIMIT = 100_000;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseCloseTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Promise: nothing withheld after close, whatever the requests in flight did. */
    @RepeatedTest(3)
    void closingUnderLoadLeavesNothingWithheld() throws Exception {
        Rule rule = Rule.of("closing", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));
        ValkeyRateLimiter closing = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(rule, 64, Duration.ofMillis(500)).build();
        AtomicLong admitted = new AtomicLong();
        AtomicBoolean closed = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<?>> threads = new ArrayList<>();
        try {
            for (int t = 0; t < 6; t++) {
                String key = "k" + (t % 2);
                threads.add(pool.submit(() -> {
                    // Until a request after close fails or is refused: the limiter is gone.
                    for (int i = 0; i < 100_000; i++) {
                        try {
                            if (closing.acquire(rule, key).allowed()) {
                                admitted.incrementAndGet();
                            } else if (closed.get()) {
                                return;
                            }
                        } catch (RuntimeException e) {
                            return;
                        }
                    }
                }));
            }
            while (admitted.get() < 2_000) {
                Thread.sleep(1);
            }
            closing.close();
            closed.set(true);
            for (Future<?> each : threads) {
                each.get();
            }
        } finally {
            pool.shutdownNow();
        }
        try (ValkeyRateLimiter plain = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock).build()) {
            long rest = plain.peek(rule, "k0", 1).remaining() + plain.peek(rule, "k1", 1).remaining();
            assertThat(2 * LIMIT - admitted.get() - rest).as("units withheld after close (admitted %d)", admitted.get())
                    .isZero();
        }
    }
}
