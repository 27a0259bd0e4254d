package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three instances hammer leased keys while Valkey is killed and started again, empty (README,
 * "Local leases", resets and lost state): from the kill on, a key sees at most its fresh limit
 * plus {@code local-lease} units per instance that held a lease (and the requests already decided
 * by the old state when it died, one per thread). {@code on-failure=closed}: nothing else is
 * admitted while it is down. The clock stands still: one window, no lease ends by time.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseRestartLoadTest {

    private static final int INSTANCES = 3;
    private static final int THREADS = 2 * INSTANCES;
    private static final int KEYS = 3;
    private static final long LIMIT = 2_000;
    private static final long LEASE = 32;
    /** Long enough for the keys to fill again after the restart on a busy machine. */
    private static final long RECOVERY_MILLIS = 60_000;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseRestartLoadTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        assertThat(valkey.restartable()).as("a server this test may kill and start (not one at VALKEY_URL)").isTrue();
        valkey.flushAll();
    }

    @Test
    void afterARestartAKeySeesItsFreshLimitPlusALeasePerInstance() throws Exception {
        Rule rule = Rule.of("leased", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));
        List<ValkeyRateLimiter> stores = new ArrayList<>();
        List<ResilientRateLimiter> limiters = new ArrayList<>();
        AtomicLongArray admitted = new AtomicLongArray(KEYS);
        AtomicLong total = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        long[] beforeKill = new long[KEYS];
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            for (int i = 0; i < INSTANCES; i++) {
                ValkeyRateLimiter store = ValkeyRateLimiter.builder()
                        .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofMillis(200)))
                        .clientClock(clock).localLease(rule, LEASE, Duration.ofMinutes(10)).build();
                stores.add(store);
                limiters.add(ResilientRateLimiter.builder(store).policy(rule, FailurePolicy.closed())
                        .denyCache(0).build());
            }
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                ResilientRateLimiter limiter = limiters.get(t % INSTANCES);
                threads.add(pool.submit(() -> {
                    for (int i = 0; !done.get(); i++) {
                        int key = i % KEYS;
                        if (limiter.acquire(rule, "k" + key).allowed()) {
                            admitted.incrementAndGet(key);
                            total.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            while (total.get() < KEYS * LIMIT / 2) {
                Thread.sleep(1);
            }
            valkey.stop();
            // Counted once the server is gone: a thread admitted by the old state while the kill
            // was on its way (leases aside, a call each time) belongs before it, not to the
            // fresh limit (taken before the stop, a busy machine let one thread in 2 more so).
            for (int key = 0; key < KEYS; key++) {
                beforeKill[key] = admitted.get(key);
            }
            Thread.sleep(300);
            valkey.start();
            // Until every key has had its fresh limit (the threads keep asking a while longer,
            // for what the leases from before still hold), or a minute.
            long deadline = System.nanoTime() + RECOVERY_MILLIS * 1_000_000;
            while (!filledAgain(admitted, beforeKill) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            Thread.sleep(200);
            done.set(true);
            for (Future<?> each : threads) {
                each.get();
            }
        } finally {
            limiters.forEach(ResilientRateLimiter::close);
            stores.forEach(ValkeyRateLimiter::close);
            pool.shutdownNow();
        }
        for (int key = 0; key < KEYS; key++) {
            long after = admitted.get(key) - beforeKill[key];
            System.out.printf("key k%d: %d admitted before the kill, %d from it on (fresh limit %d, leases %d x %d)%n",
                    key, beforeKill[key], after, LIMIT, INSTANCES, LEASE);
            assertThat(after).as("k%d admitted from the kill on", key)
                    .isLessThanOrEqualTo(LIMIT + INSTANCES * LEASE + THREADS)
                    .isGreaterThanOrEqualTo(LIMIT);
        }
    }

    private static boolean filledAgain(AtomicLongArray admitted, long[] beforeKill) {
        for (int key = 0; key < KEYS; key++) {
            if (admitted.get(key) - beforeKill[key] < LIMIT) {
                return false;
            }
        }
        return true;
    }
}
