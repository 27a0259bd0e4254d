package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A busy Valkey is not a dead one. While a server answers most calls but stalls now and then
 * (here: a 40 ms script, then 100 ms of rest, past the 20 ms timeout), the breaker must stay closed:
 * with {@code on-failure=open}, a request is let through unlimited only when its own call
 * failed, never because an open breaker refused calls the server would have answered.
 */
@ExtendWith(ValkeyExtension.class)
class OverloadTest {

    /** Keeps the server busy for a number of loop turns (a script's TIME is frozen while it runs). */
    private static final String STALL = "local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + i end return 1";

    private final ValkeyServer valkey;

    OverloadTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void aStallingValkeyNeverOpensTheBreakerAndOnlyFailedCallsFailOpen() throws Exception {
        valkey.flushAll();
        Rule rule = Rule.of("busy", Algorithm.FIXED_WINDOW, 200, Duration.ofHours(1));
        AtomicInteger refusedByBreaker = new AtomicInteger();
        AtomicInteger failedCalls = new AtomicInteger();
        AtomicInteger allowed = new AtomicInteger();
        AtomicInteger decided = new AtomicInteger();
        try (ValkeyRateLimiter valkeyLimiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofMillis(20))
                        .withConnectTimeout(Duration.ofMillis(20)).withPoolMaxWait(Duration.ofMillis(20)))
                .circuitBreaker(5, Duration.ofSeconds(1)).build();
             RateLimiter limiter = ResilientRateLimiter.builder(counting(valkeyLimiter, refusedByBreaker, failedCalls))
                     .denyCache(0).build();
             Jedis staller = new Jedis(java.net.URI.create(valkey.url()), 10_000)) {
            long turns = turnsFor(staller, Duration.ofMillis(40));
            long stalledNanos = 0;
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> load = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                Thread thread = new Thread(() -> {
                    while (!stop.get()) {
                        Decision decision = limiter.acquire(rule, "hot");
                        decided.incrementAndGet();
                        if (decision.allowed()) {
                            allowed.incrementAndGet();
                        }
                    }
                });
                thread.start();
                load.add(thread);
            }
            // A server that answers first, then stalls: a busy one, not one that was never there.
            Thread.sleep(300);
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            int stalls = 0;
            while (System.nanoTime() < until) {
                long start = System.nanoTime();
                staller.eval(STALL, List.of(), List.of(Long.toString(turns)));
                long took = Math.max(1, System.nanoTime() - start);
                stalledNanos += took;
                // Keep each stall near 40 ms whatever else the machine is doing.
                turns = Math.max(1_000, Math.min(turns * 2, turns * Duration.ofMillis(40).toNanos() / took));
                stalls++;
                Thread.sleep(100);
            }
            stop.set(true);
            for (Thread thread : load) {
                thread.join(10_000);
            }
            System.out.printf("overload: %d stalls of %d ms on average, %d decisions, %d allowed (limit 200), "
                    + "%d calls failed, %d refused by the breaker%n", stalls, stalledNanos / stalls / 1_000_000,
                    decided.get(), allowed.get(), failedCalls.get(), refusedByBreaker.get());
            assertThat(failedCalls.get()).as("the stalls must make calls time out, or this tests nothing").isPositive();
            assertThat(refusedByBreaker.get()).as("calls refused by an open breaker").isZero();
            assertThat(allowed.get()).as("allowed: the limit plus the calls that failed").isLessThanOrEqualTo(
                    200 + failedCalls.get());
        }
    }

    /** Loop turns that keep this server busy for about the given time. */
    private static long turnsFor(Jedis jedis, Duration stall) {
        long turns = 1_000_000;
        long start = System.nanoTime();
        jedis.eval(STALL, List.of(), List.of(Long.toString(turns)));
        long took = Math.max(1, System.nanoTime() - start);
        return Math.max(1, turns * stall.toNanos() / took);
    }

    /** The Valkey limiter, counting its failures by kind. */
    private static RateLimiter counting(ValkeyRateLimiter delegate, AtomicInteger refusedByBreaker,
                                        AtomicInteger failedCalls) {
        return new RateLimiter() {
            @Override
            public Decisions acquireAll(List<Claim> claims) {
                try {
                    return delegate.acquireAll(claims);
                } catch (RateLimitException e) {
                    (e.getMessage().contains("circuit breaker") ? refusedByBreaker : failedCalls).incrementAndGet();
                    throw e;
                }
            }

            @Override
            public Decision peek(Rule rule, String key, long cost) {
                return delegate.peek(rule, key, cost);
            }

            @Override
            public void reset(Rule rule, String key) {
                delegate.reset(rule, key);
            }

            @Override
            public void close() {
                delegate.close();
            }
        };
    }
}
