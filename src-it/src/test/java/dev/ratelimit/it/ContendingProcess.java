package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A separate JVM hammering one key, for the multi-process concurrency test. It waits until a
 * given instant so every process starts together, then prints how many requests it was
 * allowed.
 *
 * <p>Arguments: url algorithm limit window-ms attempts threads start-at-epoch-ms now-ms
 */
public final class ContendingProcess {

    private ContendingProcess() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        Rule rule = Rule.of("contended", Algorithm.fromId(args[1]), Long.parseLong(args[2]),
                Duration.ofMillis(Long.parseLong(args[3])));
        int attempts = Integer.parseInt(args[4]);
        int threads = Integer.parseInt(args[5]);
        long startAt = Long.parseLong(args[6]);
        long now = Long.parseLong(args[7]);
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(url).withSocketTimeout(Duration.ofSeconds(2))
                        .withPoolMaxWait(Duration.ofSeconds(2)))
                .clientClock(() -> now)
                .build()) {
            System.out.println(Contention.hammer(limiter, rule, attempts, threads, startAt));
        }
    }

    /** Shared with the in-JVM side of the test. */
    static final class Contention {
        private Contention() {
        }

        static int hammer(ValkeyRateLimiter limiter, Rule rule, int attempts, int threads, long startAt)
                throws InterruptedException {
            AtomicInteger allowed = new AtomicInteger();
            AtomicInteger next = new AtomicInteger();
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Thread(() -> {
                    while (System.currentTimeMillis() < startAt) {
                        Thread.onSpinWait();
                    }
                    while (next.getAndIncrement() < attempts) {
                        if (limiter.acquire(rule, "shared").allowed()) {
                            allowed.incrementAndGet();
                        }
                    }
                });
                workers[t].start();
            }
            for (Thread worker : workers) {
                worker.join();
            }
            return allowed.get();
        }
    }
}
