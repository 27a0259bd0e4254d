package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peek answers what the very next request of that cost gets, with local leases (token bucket,
 * GCRA, fixed window; reservations committed and cancelled; one instance and two), and the counts
 * stay exact: never more than the limit admitted.
 */
@ExtendWith(ValkeyExtension.class)
class PeekMatchesAcquireTest {

    private final ValkeyServer server;

    PeekMatchesAcquireTest(ValkeyServer server) {
        this.server = server;
    }

    enum Algo { TOKEN_BUCKET, GCRA, FIXED_WINDOW }

    private static Rule rule(Algo a, String name) {
        // limit 20 per hour: refill negligible (one unit per 3 min), window long.
        return Rule.of(name, Algorithm.valueOf(a.name()), 20, Duration.ofHours(1));
    }

    private ValkeyRateLimiter limiter(Rule rule, long size, Duration time) {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(server.url()).withSocketTimeout(Duration.ofSeconds(2)))
                .localLease(rule, size, time)
                .build();
    }

    /** One instance: peek(cost) == acquire(cost) for every step; total admitted exactly the limit. */
    @ParameterizedTest
    @EnumSource(Algo.class)
    void peekAgreesWithNextRequestOneInstance(Algo algo) {
        for (int seed = 0; seed < 6; seed++) {
            Rule rule = rule(algo, "pk1" + algo.ordinal() + "s" + seed);
            String key = "k" + System.nanoTime();
            Random random = new Random(seed);
            long admitted = 0;
            List<String> trace = new ArrayList<>();
            try (ValkeyRateLimiter limiter = limiter(rule, 4, Duration.ofSeconds(30))) {
                for (int step = 0; step < 60; step++) {
                    long cost = 1 + random.nextInt(3);
                    Decision peek = limiter.peek(rule, key, cost);
                    int op = random.nextInt(4);
                    boolean allowed;
                    if (op == 0) {
                        Reservation r = limiter.reserve(rule, key, cost);
                        allowed = r.allowed();
                        if (allowed && random.nextBoolean()) {
                            r.cancel();
                            trace.add("reserve+cancel " + cost + " peek=" + peek.allowed() + "/" + peek.remaining());
                            assertThat(allowed).as("seed %d step %d %s", seed, step, trace).isEqualTo(peek.allowed());
                            continue;
                        } else if (allowed) {
                            r.commit();
                        }
                    } else {
                        allowed = limiter.acquire(rule, key, cost).allowed();
                    }
                    trace.add((op == 0 ? "reserve " : "acquire ") + cost + " peek=" + peek.allowed() + "/"
                            + peek.remaining() + " got=" + allowed);
                    assertThat(allowed).as("seed %d step %d %s: peek said %s", seed, step, trace, peek)
                            .isEqualTo(peek.allowed());
                    if (allowed) {
                        admitted += cost;
                    }
                }
                // drain with cost 1
                for (int i = 0; i < 25; i++) {
                    Decision peek = limiter.peek(rule, key, 1);
                    boolean allowed = limiter.acquire(rule, key, 1).allowed();
                    assertThat(allowed).as("drain %d seed %d %s", i, seed, trace).isEqualTo(peek.allowed());
                    if (allowed) {
                        admitted++;
                    }
                }
            }
            assertThat(admitted).as("seed %d admitted units, %s", seed, trace).isEqualTo(20);
        }
    }

    /**
     * Two instances, sequential: a peek on one that allows is followed by an allowed acquire; a
     * peek that refuses may meet units the other instance gives back meanwhile (a lease that ran
     * out gives back its margin on that instance's sweeper thread, not on the request's), so its
     * acquire may be allowed, never the other way. Never over the limit, and no unit lost: once
     * both have closed (giving back what they hold), a third instance finds exactly the rest.
     */
    @ParameterizedTest
    @EnumSource(Algo.class)
    void peekAgreesTwoInstances(Algo algo) {
        for (int seed = 0; seed < 4; seed++) {
            Rule rule = rule(algo, "pk2" + algo.ordinal() + "s" + seed);
            String key = "k" + System.nanoTime();
            Random random = new Random(100 + seed);
            long admitted = 0;
            List<String> trace = new ArrayList<>();
            long started = System.nanoTime();
            long startHour = System.currentTimeMillis() / 3_600_000;
            try (ValkeyRateLimiter a = limiter(rule, 4, Duration.ofSeconds(30));
                 ValkeyRateLimiter b = limiter(rule, 4, Duration.ofSeconds(30))) {
                for (int step = 0; step < 80; step++) {
                    ValkeyRateLimiter l = random.nextBoolean() ? a : b;
                    long cost = 1 + random.nextInt(2);
                    Decision peek = l.peek(rule, key, cost);
                    Decision d = l.acquire(rule, key, cost);
                    trace.add((l == a ? "A " : "B ") + cost + " peek=" + peek.allowed() + "/" + peek.remaining()
                            + " got=" + d.allowed() + "/" + d.remaining());
                    if (peek.allowed()) {
                        assertThat(d.allowed()).as("seed %d step %d %s", seed, step, trace).isTrue();
                    }
                    if (d.allowed()) {
                        admitted += cost;
                    }
                }
            }
            assertThat(admitted).as("seed %d %s", seed, trace).isLessThanOrEqualTo(20);
            long rest = 0;
            try (ValkeyRateLimiter c = ValkeyRateLimiter.builder()
                    .settings(ValkeySettings.of(server.url()).withSocketTimeout(Duration.ofSeconds(2))).build()) {
                while (rest <= 20 && c.acquire(rule, key, 1).allowed()) {
                    rest++;
                }
            }
            // A bucket refills one unit every 3 minutes, a window starts anew on the hour: the run
            // may have outlasted some.
            long refilled = algo == Algo.FIXED_WINDOW
                    ? (System.currentTimeMillis() / 3_600_000 == startHour ? 0 : 20)
                    : Duration.ofNanos(System.nanoTime() - started).toMinutes() / 3;
            assertThat(admitted + rest).as("seed %d: admitted %d, then %d left %s", seed, admitted, rest, trace)
                    .isBetween(20L, 20L + refilled);
        }
    }

    /** Two instances, concurrent threads: never more than the limit admitted. */
    @ParameterizedTest
    @EnumSource(Algo.class)
    void neverOverLimitConcurrent(Algo algo) throws Exception {
        Rule rule = Rule.of("pk3" + algo.ordinal(), Algorithm.valueOf(algo.name()), 50, Duration.ofHours(1));
        String key = "k" + System.nanoTime();
        AtomicLong admitted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (ValkeyRateLimiter a = limiter(rule, 8, Duration.ofMillis(200));
             ValkeyRateLimiter b = limiter(rule, 8, Duration.ofMillis(200))) {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                ValkeyRateLimiter l = t % 2 == 0 ? a : b;
                int tt = t;
                fs.add(pool.submit(() -> {
                    Random random = new Random(tt);
                    for (int i = 0; i < 40; i++) {
                        long cost = 1 + random.nextInt(2);
                        if (random.nextInt(5) == 0) {
                            Reservation r = l.reserveAll(List.of(Claim.of(rule, key, cost)));
                            if (r.allowed()) {
                                if (random.nextBoolean()) {
                                    r.cancel();
                                } else {
                                    r.commit();
                                    admitted.addAndGet(cost);
                                }
                            }
                        } else if (l.acquire(rule, key, cost).allowed()) {
                            admitted.addAndGet(cost);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            assertThat(admitted.get()).isLessThanOrEqualTo(50);
            // once leases are over, one instance takes what is left: admitted + left == limit (fixed window exact)
            Thread.sleep(800);
            long more = 0;
            for (int i = 0; i < 60; i++) {
                if (a.acquire(rule, key, 1).allowed()) {
                    more++;
                }
            }
            assertThat(admitted.get() + more).as("admitted %d + later %d", admitted.get(), more).isLessThanOrEqualTo(50);
            if (algo == Algo.FIXED_WINDOW) {
                assertThat(admitted.get() + more).as("fixed window: units lost").isEqualTo(50);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
