package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decisions of concurrent threads sent together in pipelines: each caller must get its own
 * reply, its own error, within the bounds of one call, and the limits must stay exact.
 */
@ExtendWith(ValkeyExtension.class)
class PipelineTest {

    private static final int THREADS = 24;

    private final ValkeyServer valkey;

    PipelineTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    private ValkeyRateLimiter limiter(int pipelines, Duration timeout) {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(timeout).withConnectTimeout(timeout)
                        .withPoolMaxWait(timeout))
                .pipelines(pipelines).circuitBreaker(0, Duration.ofSeconds(1)).build();
    }

    /** Every thread's limit differs: a reply handed to the wrong caller shows in its count. */
    @Test
    void everyCallerGetsItsOwnReplyInOrder() throws Exception {
        valkey.flushAll();
        Queue<String> wrong = new ConcurrentLinkedQueue<>();
        try (ValkeyRateLimiter limiter = limiter(1, Duration.ofSeconds(2))) {
            runAll(THREADS, t -> {
                Rule rule = Rule.of("own-" + t, Algorithm.FIXED_WINDOW, 10 + t, Duration.ofHours(1));
                for (int i = 0; i < 2 * (10 + t); i++) {
                    Decision decision = limiter.acquire(rule, "caller-" + t);
                    boolean shouldAllow = i < 10 + t;
                    long shouldRemain = Math.max(0, 10 + t - 1 - i);
                    if (decision.allowed() != shouldAllow || decision.remaining() != shouldRemain
                            || decision.limit() != 10 + t) {
                        wrong.add("thread " + t + " call " + i + ": " + decision);
                    }
                }
            });
        }
        assertThat(wrong).isEmpty();
    }

    /**
     * Calls queued while the one pipeline is out go together: Valkey reads them in far fewer
     * reads than calls ({@code total_reads_processed} of {@code INFO stats}), where calls sent
     * each on its own take one read each. The server is paused (its answer to {@code CLIENT
     * PAUSE} means the pause is on) while the callers arrive, so the first call's reply cannot
     * come back before the others have queued behind it.
     */
    @Tag("wall-clock") // bounds a latency: keep such tests few, with generous bounds
    @Test
    void queuedCallsReachValkeyInOneWrite() throws Exception {
        valkey.flushAll();
        Queue<String> wrong = new ConcurrentLinkedQueue<>();
        try (ValkeyRateLimiter limiter = limiter(1, Duration.ofSeconds(6)); Jedis admin = valkey.connect()) {
            Rule warm = Rule.of("warm", Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
            limiter.acquire(warm, "a");
            limiter.acquire(warm, "b");
            long before = readsProcessed(admin);
            valkey.pause(Duration.ofSeconds(3));
            CountDownLatch arriving = new CountDownLatch(THREADS);
            long paused = System.nanoTime();
            Thread[] callers = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                int index = t;
                callers[t] = new Thread(() -> {
                    Rule rule = Rule.of("own-" + index, Algorithm.FIXED_WINDOW, 10 + index, Duration.ofHours(1));
                    arriving.countDown();
                    Decision decision = limiter.acquire(rule, "caller-" + index);
                    if (!decision.allowed() || decision.remaining() != 9 + index) {
                        wrong.add("thread " + index + ": " + decision);
                    }
                });
                callers[t].start();
            }
            arriving.await();
            assertThat(Duration.ofNanos(System.nanoTime() - paused))
                    .as("the callers must all have come while the server was paused").isLessThan(Duration.ofSeconds(2));
            for (Thread caller : callers) {
                caller.join(20_000);
            }
            long reads = readsProcessed(admin) - before;
            System.out.printf("%d calls queued behind one: Valkey read them, and this test's commands, in %d reads%n",
                    THREADS, reads);
            assertThat(wrong).isEmpty();
            assertThat(reads).as("reads for %d calls (one each without pipelining)", THREADS).isLessThan(THREADS / 2);
        }
    }

    private static long readsProcessed(Jedis admin) {
        Matcher m = Pattern.compile("total_reads_processed:(\\d+)").matcher(admin.info("stats"));
        assertThat(m.find()).as("INFO stats has total_reads_processed").isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void oneHotKeyStaysExactWhileThreadsHammer() throws Exception {
        valkey.flushAll();
        Rule rule = Rule.of("hot", Algorithm.TOKEN_BUCKET, 500, Duration.ofHours(1));
        AtomicInteger allowed = new AtomicInteger();
        try (ValkeyRateLimiter limiter = limiter(2, Duration.ofSeconds(2))) {
            runAll(THREADS, t -> {
                for (int i = 0; i < 60; i++) {
                    if (limiter.acquire(rule, "one").allowed()) {
                        allowed.incrementAndGet();
                    }
                }
            });
        }
        assertThat(allowed.get()).isEqualTo(500);
    }

    /** A wrong-typed key fails its own caller's call; the calls sent with it are answered. */
    @Test
    void oneUnreadableStateFailsOnlyItsCaller() throws Exception {
        valkey.flushAll();
        Rule rule = Rule.of("mixed", Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofHours(1));
        AtomicInteger unreadable = new AtomicInteger();
        AtomicInteger answered = new AtomicInteger();
        Queue<Throwable> other = new ConcurrentLinkedQueue<>();
        try (ValkeyRateLimiter limiter = limiter(1, Duration.ofSeconds(2)); Jedis admin = valkey.connect()) {
            admin.lpush(limiter.stateKey(rule, "broken"), "not a bucket");
            runAll(THREADS, t -> {
                for (int i = 0; i < 100; i++) {
                    try {
                        limiter.acquire(rule, t % 4 == 0 ? "broken" : "fine-" + t);
                        answered.incrementAndGet();
                    } catch (UnreadableStateException e) {
                        if (t % 4 != 0) {
                            other.add(e);
                        }
                        unreadable.incrementAndGet();
                    } catch (RuntimeException e) {
                        other.add(e);
                    }
                }
            });
        }
        assertThat(other).isEmpty();
        assertThat(unreadable.get()).isEqualTo(THREADS / 4 * 100);
        assertThat(answered.get()).isEqualTo((THREADS - THREADS / 4) * 100);
    }

    /**
     * After FUNCTION FLUSH every queued call gets "function not found": each reloads and goes on.
     * A call survives a flush between its load and its call twice (LimiterScript's attempts), so
     * the flushes are spaced wider than a busy machine's round trip: a flush every 30 ms once
     * raced one caller three times in a row while other builds ran.
     */
    @Test
    void aFunctionFlushUnderLoadCostsNoDecision() throws Exception {
        valkey.flushAll();
        Rule rule = Rule.of("flushed", Algorithm.GCRA, 1_000_000, Duration.ofHours(1));
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong decided = new AtomicLong();
        try (ValkeyRateLimiter limiter = limiter(2, Duration.ofSeconds(2)); Jedis admin = valkey.connect()) {
            limiter.acquire(rule, "load");
            Thread flusher = new Thread(() -> {
                for (int i = 0; i < 10 && !stop.get(); i++) {
                    admin.functionFlush();
                    sleep(120);
                }
            });
            flusher.start();
            runAll(THREADS, t -> {
                for (int i = 0; i < 150; i++) {
                    try {
                        limiter.acquire(rule, "k" + t);
                        decided.incrementAndGet();
                    } catch (RuntimeException e) {
                        failures.add(e);
                    }
                }
            });
            stop.set(true);
            flusher.join();
        }
        assertThat(failures).isEmpty();
        assertThat(decided.get()).isEqualTo(THREADS * 150L);
    }

    /**
     * A paused server: every caller, queued or sent, fails within the bound of its call (the
     * connect timeout, pool wait and socket timeout, 3 × 40 ms here, with wide margins for this
     * machine), none hangs, and calls succeed again once it is back.
     */
    @Tag("wall-clock") // bounds a latency: keep such tests few, with generous bounds
    @Test
    void aPausedServerFailsEveryQueuedCallerWithinItsBound() throws Exception {
        valkey.flushAll();
        Rule rule = Rule.of("paused", Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofHours(1));
        Hammered hammered;
        try (ValkeyRateLimiter limiter = limiter(1, Duration.ofMillis(40)); Jedis admin = valkey.connect()) {
            hammered = hammerWhilePaused(limiter, rule, THREADS, Duration.ofMillis(900), () -> admin.clientPause(600));
        }
        assertThat(hammered.unexpected()).isEmpty();
        assertThat(hammered.failed()).as("the pause must make calls fail, or this tests nothing").isPositive();
        assertThat(hammered.slowest()).as("the slowest call").isLessThan(Duration.ofMillis(500));
    }

    /**
     * A stalled server: no call, queued or sent, lasts longer than the stated bound (connect
     * timeout + pool wait + socket timeout: 10 + 10 + 600 ms here) plus 400 ms for a busy
     * machine. A queued call used to wait for a pipeline (up to one pipeline's socket timeout)
     * and then for its own pipeline's reply (another): up to twice the bound. The bound is
     * mostly socket timeout here so that twice it cannot pass for it plus slack.
     */
    @Test
    void noCallOutlastsItsBoundWhileTheServerStalls() throws Exception {
        valkey.flushAll();
        Duration bound = Duration.ofMillis(10 + 10 + 600);
        Rule rule = Rule.of("stalled", Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofHours(1));
        Hammered hammered;
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withConnectTimeout(Duration.ofMillis(10))
                        .withPoolMaxWait(Duration.ofMillis(10)).withSocketTimeout(Duration.ofMillis(600)))
                .pipelines(1).circuitBreaker(0, Duration.ofSeconds(1)).build()) {
            hammered = hammerWhilePaused(limiter, rule, 12, Duration.ofMillis(3_000),
                    () -> valkey.pause(Duration.ofMillis(2_500)));
        }
        System.out.printf("stalled server: %d calls failed, the slowest took %d ms (bound %d ms)%n", hammered.failed(),
                hammered.slowest().toMillis(), bound.toMillis());
        assertThat(hammered.unexpected()).isEmpty();
        assertThat(hammered.failed()).as("the stall must make calls fail, or this tests nothing").isGreaterThan(12);
        assertThat(hammered.slowest()).as("the slowest call, against a bound of %s", bound)
                .isLessThan(bound.plusMillis(400));
    }

    /** What threads calling through a pause saw: the slowest call, the calls failed, anything else thrown. */
    private record Hammered(Duration slowest, int failed, Queue<Throwable> unexpected) {
    }

    /**
     * {@code threads} threads deciding for {@code runFor} while {@code pause} runs once they have
     * all started; then one decision must succeed again.
     */
    private static Hammered hammerWhilePaused(ValkeyRateLimiter limiter, Rule rule, int threads, Duration runFor,
                                              Runnable pause) throws Exception {
        AtomicLong slowest = new AtomicLong();
        AtomicInteger failed = new AtomicInteger();
        Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        limiter.acquire(rule, "warm");
        CountDownLatch started = new CountDownLatch(threads);
        Thread pauser = new Thread(() -> {
            await(started);
            pause.run();
        });
        pauser.start();
        runAll(threads, t -> {
            started.countDown();
            long end = System.nanoTime() + runFor.toNanos();
            while (System.nanoTime() < end) {
                long began = System.nanoTime();
                try {
                    limiter.acquire(rule, "k" + t);
                } catch (RateLimitException e) {
                    failed.incrementAndGet();
                } catch (RuntimeException e) {
                    unexpected.add(e);
                }
                slowest.accumulateAndGet(System.nanoTime() - began, Math::max);
            }
        });
        pauser.join();
        // Once the server is back, a call succeeds again: within 10 s, since a busy machine may
        // make a first call miss its timeout for reasons of its own.
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        Decision after = null;
        while (after == null) {
            try {
                after = limiter.acquire(rule, "after");
            } catch (RateLimitException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no call succeeded within 10 s of the pause", e);
                }
                sleep(50);
            }
        }
        assertThat(after.allowed()).isTrue();
        return new Hammered(Duration.ofNanos(slowest.get()), failed.get(), unexpected);
    }

    private interface Body {
        void run(int thread) throws Exception;
    }

    private static void runAll(int threads, Body body) throws InterruptedException {
        Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread thread = new Thread(() -> {
                try {
                    body.run(index);
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            thread.start();
            running.add(thread);
        }
        for (Thread thread : running) {
            thread.join(60_000);
            assertThat(thread.isAlive()).as("a caller still waits after 60 s").isFalse();
        }
        assertThat(errors).isEmpty();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
