package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's bound on units withheld (section "Local leases"): per rule and key, another
 * instance holds at most {@code local-lease} units (a fixed window has no margin), and nothing of
 * a lease its requests ran out. Measured with the clock standing still, so that no lease ends by
 * its time and nothing else goes back while the other instance counts what it can still get.
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
        try (ValkeyRateLimiter holder = leasing(rule); ValkeyRateLimiter plain = plain()) {
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

    /**
     * Promise: a lease that a request runs out ends with that request, and its margin goes back at
     * once, not at the sweeper's next pass: the other instances can then take every unit the holder
     * did not admit. Forced with leases of ten minutes (the sweeper passes every two and a half) on
     * a bucket of 60 an hour, a burst of 100 (margin 10), the clock standing still: the holder's
     * first request takes no lease, its second a lease of one beside its unit (and the margin), its
     * third runs that lease out. The holder then admitted three units and holds none; once the
     * margin has landed (waited for, at most 30 s) the other instance gets the other 97, no fewer.
     * Kept until the sweeper's pass, the margin would be withheld meanwhile, and the request that
     * ran the lease out would find it still serving and take the next one ahead of it.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aLeaseRunOutWithholdsNothingOnceItsMarginIsBack(Algorithm algorithm) {
        Rule rule = Rule.of("kept", algorithm, 60, Duration.ofHours(1)).toBuilder().burst(100).build();
        try (ValkeyRateLimiter holder = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                .withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock)
                .localLease(rule, LEASE, Duration.ofMinutes(10)).build();
             ValkeyRateLimiter other = plain()) {
            for (int i = 0; i < 3; i++) {
                assertThat(holder.acquire(rule, "hot").allowed()).isTrue();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long left;
            while ((left = other.peek(rule, "hot", 1).remaining()) != 97 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            assertThat(left).as("left in Valkey once the holder, having admitted 3, gave back what it held (30 s)")
                    .isEqualTo(97);
            long got = 0;
            while (other.acquire(rule, "hot").allowed()) {
                got++;
            }
            assertThat(got).as("units the other instance got").isEqualTo(97);
        }
    }

    private ValkeyRateLimiter leasing(Rule rule) {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(rule, LEASE, Duration.ofMillis(500)).build();
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
