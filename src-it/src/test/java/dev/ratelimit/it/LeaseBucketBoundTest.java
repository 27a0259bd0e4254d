package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bucket's bound with leases held while it refills: three instances on one Valkey, a clock
 * that moves in steps, and every admission counted at the step it happened in. In every interval
 * of steps, admissions must not exceed {@code burst + rate × length} (README, "Local leases":
 * "the rule's bound holds across instances as without leases").
 */
@ExtendWith(ValkeyExtension.class)
class LeaseBucketBoundTest {

    private static final long STEP = 20;
    private static final int STEPS = 150;
    private static final long LIMIT = 50;
    private static final Duration WINDOW = Duration.ofSeconds(1);
    private static final long BURST = 20;

    private final ValkeyServer valkey;
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    LeaseBucketBoundTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Promise: a bucket's bound holds in every interval, with leases taken, served and given back. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void everyIntervalAdmitsAtMostBurstPlusRefill(Algorithm algorithm) throws Exception {
        check(algorithm, true);
    }

    /** The same measure without leases: the bound as this test computes it holds there. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void withoutLeasesEveryIntervalAdmitsAtMostBurstPlusRefill(Algorithm algorithm) throws Exception {
        check(algorithm, false);
    }

    private void check(Algorithm algorithm, boolean leases) throws Exception {
        Rule rule = Rule.of("bucket", algorithm, LIMIT, WINDOW).toBuilder().burst(BURST).build();
        long[] admitted = new long[STEPS];
        List<ValkeyRateLimiter> limiters = List.of(limiter(rule, leases), limiter(rule, leases), limiter(rule, leases));
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            for (int step = 0; step < STEPS; step++) {
                AtomicLong count = new AtomicLong();
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 6; t++) {
                    ValkeyRateLimiter limiter = limiters.get(t % 3);
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < 3; i++) {
                            if (limiter.acquire(rule, "hot", 1 + (i % 2)).allowed()) {
                                count.addAndGet(1 + (i % 2));
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> each : done) {
                    each.get();
                }
                admitted[step] = count.get();
                clock.advance(STEP);
                // Real time for the sweeper: leases that ended give back, as in a live system.
                if (step % 10 == 9) {
                    Thread.sleep(30);
                }
            }
        } finally {
            pool.shutdownNow();
            limiters.forEach(ValkeyRateLimiter::close);
        }
        for (int from = 0; from < STEPS; from++) {
            long sum = 0;
            for (int to = from; to < STEPS; to++) {
                sum += admitted[to];
                long bound = BURST + (to - from) * STEP * LIMIT / WINDOW.toMillis();
                assertThat(sum).as("%s (leases %s): units admitted at steps %d..%d (%d ms)", algorithm.id(), leases, from, to,
                        (to - from) * STEP).isLessThanOrEqualTo(bound);
            }
        }
    }

    private ValkeyRateLimiter limiter(Rule rule, boolean leases) {
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(clock);
        return (leases ? builder.localLease(rule, 8, Duration.ofMillis(100)) : builder).build();
    }
}
