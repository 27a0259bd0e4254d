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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three instances hammer leased keys while Valkey stalls ({@code DEBUG SLEEP}, past the client
 * timeout) now and then. Whatever failed, each key's admitted requests stay within its limit
 * (plus, under {@code on-failure=local}, what each instance's own local limit admits), and
 * Valkey counts at least every unit admitted on its word: nothing a lease served or gave back
 * was granted twice (README, "Local leases": when Valkey is down). The clock stands still: one
 * window, and leases end only when they run out or the limiters close.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseFaultLoadTest {

    private static final int INSTANCES = 3;
    private static final int KEYS = 3;
    private static final long LIMIT = 2_000;
    private static final long LOCAL_LIMIT = 40;
    private static final int REQUESTS_PER_THREAD = 3_000;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseFaultLoadTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void closedPolicyAdmitsNoMoreThanTheLimit() throws Exception {
        run(null, 32, 3);
    }

    /** No stall: what leases alone leave counted and unadmitted once every limiter closed. */
    @Test
    void noStall() throws Exception {
        run(null, 32, 0);
    }

    @Test
    void localPolicyAdmitsNoMoreThanTheLimitAndEachInstancesLocalLimit() throws Exception {
        run(Rule.of("leased", Algorithm.FIXED_WINDOW, LOCAL_LIMIT, Duration.ofHours(1)), 32, 3);
    }

    /** The same stalls without leases: what timed-out calls alone leave counted and unadmitted. */
    @Test
    void closedPolicyWithoutLeases() throws Exception {
        run(null, 0, 3);
    }

    private void run(Rule localRule, long lease, int stalls) throws Exception {
        Rule rule = Rule.of("leased", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));
        FailurePolicy policy = localRule == null ? FailurePolicy.closed() : FailurePolicy.local(localRule);
        List<ValkeyRateLimiter> stores = new ArrayList<>();
        List<ResilientRateLimiter> limiters = new ArrayList<>();
        AtomicLongArray shared = new AtomicLongArray(KEYS);
        AtomicLongArray local = new AtomicLongArray(KEYS);
        AtomicLong unavailable = new AtomicLong();
        AtomicLong admitted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(2 * INSTANCES);
        try {
            for (int i = 0; i < INSTANCES; i++) {
                ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                        .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofMillis(100)))
                        .clientClock(clock);
                ValkeyRateLimiter store = (lease > 0 ? builder.localLease(rule, lease, Duration.ofMinutes(10)) : builder)
                        .build();
                stores.add(store);
                limiters.add(ResilientRateLimiter.builder(store).policy(rule, policy).denyCache(0).build());
            }
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < 2 * INSTANCES; t++) {
                ResilientRateLimiter limiter = limiters.get(t % INSTANCES);
                threads.add(pool.submit(() -> {
                    for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
                        int key = i % KEYS;
                        Decision decision = limiter.acquire(rule, "k" + key);
                        if (decision.allowed()) {
                            admitted.incrementAndGet();
                            (decision.basis() == Decision.Basis.LOCAL ? local : shared).incrementAndGet(key);
                        } else if (decision.basis() == Decision.Basis.UNAVAILABLE) {
                            unavailable.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            // Stalls while the keys fill up, the last near their limits.
            long[] marks = {LIMIT / 2, 3 * LIMIT / 2, 5 * LIMIT / 2};
            for (int s = 0; s < stalls; s++) {
                long mark = marks[s];
                while (admitted.get() < mark && !threads.stream().allMatch(Future::isDone)) {
                    Thread.sleep(1);
                }
                valkey.stall(Duration.ofMillis(400));
            }
            for (Future<?> each : threads) {
                each.get();
            }
        } finally {
            limiters.forEach(ResilientRateLimiter::close);
            stores.forEach(ValkeyRateLimiter::close);
            pool.shutdownNow();
        }
        try (ValkeyRateLimiter plain = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock).build()) {
            for (int key = 0; key < KEYS; key++) {
                long counted = LIMIT - plain.peek(rule, "k" + key, 1).remaining();
                System.out.printf("stalls %d, lease %d, key k%d: admitted on Valkey's word %d, locally %d, counted %d (limit %d), "
                        + "unavailable (all keys) %d%n", stalls, lease, key, shared.get(key), local.get(key), counted, LIMIT, unavailable.get());
                assertThat(shared.get(key)).as("k%d admitted on Valkey's word", key).isLessThanOrEqualTo(LIMIT);
                assertThat(counted).as("k%d counted, of %d admitted on Valkey's word", key, shared.get(key))
                        .isGreaterThanOrEqualTo(shared.get(key));
                assertThat(local.get(key)).as("k%d admitted by the local limits", key)
                        .isLessThanOrEqualTo(localRule == null ? 0 : INSTANCES * LOCAL_LIMIT);
            }
        }
    }
}
