package dev.ratelimit.it;

import dev.ratelimit.Decision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Threads asking a limiter for one key about a hundred times a second each, while a test kills
 * the store under them: what was decided by Valkey, what by policy, how slow the slowest call
 * was, and when Valkey decided again after the kill.
 */
final class FailoverLoad implements AutoCloseable {

    final AtomicInteger sharedAllowed = new AtomicInteger();
    final AtomicInteger sharedRejected = new AtomicInteger();
    final AtomicInteger byPolicy = new AtomicInteger();
    final AtomicInteger byPolicyAllowed = new AtomicInteger();
    final AtomicLong slowestNanos = new AtomicLong();
    final Queue<Throwable> escaped = new ConcurrentLinkedQueue<>();
    private final AtomicLong killedAt = new AtomicLong();
    private final AtomicLong firstSharedAfterKill = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();

    FailoverLoad(RateLimiter limiter, Rule rule, String key, int threadCount) {
        for (int t = 0; t < threadCount; t++) {
            Thread thread = new Thread(() -> {
                while (!stop.get()) {
                    long began = System.nanoTime();
                    try {
                        Decision decision = limiter.acquire(rule, key);
                        slowestNanos.accumulateAndGet(System.nanoTime() - began, Math::max);
                        if (decision.basis() == Decision.Basis.SHARED) {
                            if (decision.allowed()) {
                                sharedAllowed.incrementAndGet();
                            } else {
                                sharedRejected.incrementAndGet();
                            }
                            long kill = killedAt.get();
                            // A call sent before the kill may still have been answered by the old primary.
                            if (kill != 0 && began > kill) {
                                firstSharedAfterKill.compareAndSet(0, System.nanoTime());
                            }
                        } else {
                            byPolicy.incrementAndGet();
                            if (decision.allowed()) {
                                byPolicyAllowed.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        escaped.add(e);
                    }
                    sleep(10);
                }
            });
            thread.start();
            threads.add(thread);
        }
    }

    /**
     * Runs the kill, marks it once the process is gone (a call sent before could still be
     * answered by it), and waits for Valkey to decide again (at most 40 s).
     */
    void kill(Runnable kill) {
        kill.run();
        killedAt.set(System.nanoTime());
        long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
        while (firstSharedAfterKill.get() == 0 && System.nanoTime() < deadline) {
            sleep(50);
        }
    }

    /**
     * Waits, after {@link #kill}, for the limit to be reached and enforced: until Valkey has
     * rejected {@code rejections} calls (at most 30 s). A fixed 3 s was too short on a busy
     * machine, whose threads ask less often.
     */
    void awaitEnforced(int rejections) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (sharedRejected.get() < rejections && System.nanoTime() < deadline) {
            sleep(50);
        }
    }

    /** Milliseconds from the kill to the first decision by Valkey after it; -1 if none came. */
    long recoveryMillis() {
        return firstSharedAfterKill.get() == 0 ? -1 : (firstSharedAfterKill.get() - killedAt.get()) / 1_000_000;
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(10_000);
        }
    }

    /** A fixed-window state's count, as the promoted node holds it: {@code <end>:<count>:<generation>}. */
    static long fixedWindowCount(Jedis node, String stateKey) {
        String value = node.get(stateKey);
        return Long.parseLong(value.split(":")[1]);
    }

    /** What the load saw, for the test's output. */
    String summary(long counted, int limit) {
        return String.format("first shared decision %d ms after the kill; %d requests answered by policy (open: %d "
                + "allowed); %d allowed by Valkey against a limit of %d, the promoted replica counted %d; slowest call "
                + "%d ms", recoveryMillis(), byPolicy.get(), byPolicyAllowed.get(), sharedAllowed.get(), limit, counted,
                slowestNanos.get() / 1_000_000);
    }

    /**
     * What every failover must show: no exception reached a caller, the kill sent some requests
     * to the policy, the promoted replica counted exactly the limit and then rejected, every call
     * stayed bounded.
     */
    void assertTheLimitHeldAcrossTheFailover(long counted, int limit) {
        assertThat(escaped).as("exceptions that reached the caller").isEmpty();
        assertThat(byPolicy.get()).as("the kill must make some requests fall to the policy").isPositive();
        assertThat(counted).as("the promoted replica's count never passes the limit").isLessThanOrEqualTo(limit);
        assertThat(counted).as("the limit was reached after the failover").isEqualTo(limit);
        assertThat(sharedRejected.get()).as("and enforced").isPositive();
        // Positive: increments the old primary acknowledged and never replicated. Negative: calls
        // Valkey ran whose reply timed out, so that the caller got its policy instead.
        assertThat(sharedAllowed.get() - counted).as("allowed by Valkey minus counted by the promoted replica")
                .isBetween(-50L, 50L);
        assertThat(Duration.ofNanos(slowestNanos.get())).as("the slowest call").isLessThan(Duration.ofMillis(1_000));
    }

    /** Eight requests on a new key under a new rule of limit 5: how many the store allowed; each must be SHARED. */
    static int allowedOnAFreshKey(RateLimiter limiter, String key) {
        Rule small = Rule.of("after-failover", dev.ratelimit.Algorithm.TOKEN_BUCKET, 5, Duration.ofDays(1));
        int allowed = 0;
        for (int i = 0; i < 8; i++) {
            Decision decision = limiter.acquire(small, key);
            if (decision.basis() != Decision.Basis.SHARED) {
                throw new AssertionError("decided by " + decision.basis() + " after the failover: " + decision);
            }
            allowed += decision.allowed() ? 1 : 0;
        }
        return allowed;
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
