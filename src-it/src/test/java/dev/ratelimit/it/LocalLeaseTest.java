package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local leases on a real Valkey: decisions served without a call, never more units admitted
 * than the rule allows across instances, and unused units given back.
 */
@ExtendWith(ValkeyExtension.class)
class LocalLeaseTest {

    private static final Duration LEASE_TIME = Duration.ofMillis(300);

    private final ValkeyServer valkey;

    LocalLeaseTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void resetStats() {
        valkey.flushAll();
        try (Jedis jedis = valkey.connect()) {
            jedis.configResetStat();
        }
    }

    /** The client clock pins the windows (an aligned hour could end mid-test) and times the leases. */
    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    private ValkeyRateLimiter leasing(Rule rule, long size) {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock).localLease(rule, size, LEASE_TIME).build();
    }

    private ValkeyRateLimiter plain() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .clientClock(clock).build();
    }

    /** The limiter's calls, as functions or as scripts (whichever the server took). */
    private long functionCalls() {
        return valkey.commandCalls("fcall") + valkey.commandCalls("evalsha") + valkey.commandCalls("eval");
    }

    /** Promise: one key's requests are served from leases, most of them without a call. */
    @Test
    void aHotKeyIsServedMostlyWithoutACall() {
        // A rate whose refill during a lease (the margin, 84 units) is small beside the burst.
        Rule rule = Rule.of("api", Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = leasing(rule, 64)) {
            for (int i = 0; i < 1_000; i++) {
                assertThat(limiter.acquire(rule, "hot").allowed()).isTrue();
            }
        }
        assertThat(functionCalls()).as("function calls for 1,000 decisions").isLessThan(100);
    }

    /**
     * Promise: a key's next lease is taken while its lease still serves, so that the key's
     * requests meanwhile are served without a call: once the leases have grown, the instance
     * never runs out of units for the key between two requests.
     */
    @Test
    void theNextLeaseIsTakenBeforeTheLeaseRunsOut() {
        Rule rule = Rule.of("ahead", Algorithm.FIXED_WINDOW, 10_000, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = leasing(rule, 8); ValkeyRateLimiter plain = plain()) {
            for (int i = 0; i < 20; i++) {
                assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
            }
            long fewest = Long.MAX_VALUE;
            for (int i = 0; i < 200; i++) {
                assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
                // What this instance's peek counts beyond the store's: the units its leases hold.
                long held = limiter.peek(rule, "k", 1).remaining() - plain.peek(rule, "k", 1).remaining();
                fewest = Math.min(fewest, held);
            }
            assertThat(fewest).as("the fewest units held for the key after a request").isPositive();
        }
    }

    /**
     * Promise: threads asking for a key while its lease call is on its way wait for that call
     * rather than each calling Valkey: about one call per half lease, however many threads.
     */
    @Test
    void threadsOnAHotKeyShareItsLeaseCalls() throws Exception {
        Rule rule = Rule.of("api", Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofHours(1));
        int threads = 8;
        int each = 1_000;
        try (ValkeyRateLimiter limiter = leasing(rule, 64)) {
            assertThat(hammer(List.of(limiter), rule, threads, each)).isEqualTo((long) threads * each);
        }
        assertThat(functionCalls()).as("function calls for %d decisions on one key", threads * each)
                .isLessThan(threads * each / 16);
    }

    /** Promise: across instances, never more than the rule allows (fixed window, token bucket, GCRA). */
    @Test
    void twoInstancesOfEightThreadsAdmitExactlyTheLimit() throws Exception {
        for (Algorithm algorithm : List.of(Algorithm.FIXED_WINDOW, Algorithm.TOKEN_BUCKET, Algorithm.GCRA)) {
            // A long window: nothing comes back during the test, so the bound is the limit itself.
            Rule rule = Rule.of("exact-" + algorithm.id(), algorithm, 200, Duration.ofHours(1));
            long allowed;
            try (ValkeyRateLimiter one = leasing(rule, 16); ValkeyRateLimiter two = leasing(rule, 16)) {
                allowed = hammer(List.of(one, two), rule, 8, 100);
                assertThat(allowed).as(algorithm.id() + ": allowed of 800 asked, limit 200").isLessThanOrEqualTo(200);
            }
            // Closing gave back what the leases held: the rest of the limit, and not one unit more.
            // (A bucket's lease also charged a margin, which only its refill gives back: the clock
            // stands still here, so a bucket gets back at most the rest.)
            try (ValkeyRateLimiter after = plain()) {
                long rest = countAllowed(after, rule, 250, "shared");
                if (algorithm == Algorithm.FIXED_WINDOW) {
                    assertThat(allowed + rest).as(algorithm.id()).isEqualTo(200);
                } else {
                    assertThat(allowed + rest).as(algorithm.id()).isLessThanOrEqualTo(200);
                }
            }
        }
    }

    /** Promise: units an instance holds and does not use go back within the lease time. */
    @Test
    void unusedUnitsGoBackAfterTheLeaseTime() throws Exception {
        Rule rule = Rule.of("back", Algorithm.FIXED_WINDOW, 40, Duration.ofHours(1));
        try (ValkeyRateLimiter holder = leasing(rule, 16); ValkeyRateLimiter other = leasing(rule, 16)) {
            // A key asked for again and again: its leases grow (1, 2, 4, 8, 16), the last left unused.
            for (int i = 0; i < 22; i++) {
                assertThat(holder.acquire(rule, "k").allowed()).isTrue();
            }
            long before = countAllowed(other, rule, 40, "k");
            assertThat(before).as("withheld while the holder's lease lasts").isLessThan(40 - 22);
            clock.advance(LEASE_TIME.toMillis());
            // The sweeper gives back every quarter of the lease time (real time), which a busy
            // machine may delay: asked again until every unit is found, then once more after a
            // while, so that a unit given back twice still shows.
            long after = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (22 + before + after < 40 && System.nanoTime() < deadline) {
                Thread.sleep(LEASE_TIME.toMillis() / 4);
                after += countAllowed(other, rule, 40, "k");
            }
            Thread.sleep(LEASE_TIME.toMillis() * 2);
            after += countAllowed(other, rule, 40, "k");
            assertThat(22 + before + after).as("every unit of the window, once the leases went back").isEqualTo(40);
        }
    }

    /** Promise: a lease's decisions say what remains: the store's units and those the lease holds. */
    @Test
    void aDecisionFromALeaseCountsTheLeasedUnitsAsRemaining() {
        Rule rule = Rule.of("count", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = leasing(rule, 8)) {
            long previous = Long.MAX_VALUE;
            for (int i = 0; i < 30; i++) {
                Decision decision = limiter.acquire(rule, "k");
                assertThat(decision.allowed()).isTrue();
                assertThat(decision.remaining()).as("request " + i).isLessThan(previous).isEqualTo(100 - i - 1);
                previous = decision.remaining();
            }
        }
    }

    private static long countAllowed(ValkeyRateLimiter limiter, Rule rule, int asks, String key) {
        long allowed = 0;
        for (int i = 0; i < asks; i++) {
            allowed += limiter.acquire(rule, key).allowed() ? 1 : 0;
        }
        return allowed;
    }

    private static long hammer(List<ValkeyRateLimiter> limiters, Rule rule, int threads, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<Long>> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                ValkeyRateLimiter limiter = limiters.get(t % limiters.size());
                tasks.add(() -> {
                    long allowed = 0;
                    for (int i = 0; i < each; i++) {
                        allowed += limiter.acquire(rule, "shared").allowed() ? 1 : 0;
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
