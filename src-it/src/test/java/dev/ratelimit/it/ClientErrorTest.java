package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * An {@link Error} thrown while calling Valkey (by the client: an {@link OutOfMemoryError}
 * reading replies, say) is a failure of that call like any other: the circuit breaker counts
 * it, every caller waiting on it fails at once, the request gets its rule's policy, and calls
 * resume as soon as Valkey answers.
 */
@ExtendWith(ValkeyExtension.class)
class ClientErrorTest {

    private static final Rule RULE = Rule.of("errors", Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofHours(1));
    private static final Duration OPEN_FOR = Duration.ofMillis(300);

    /** The clients a limiter may be given: the pipelines are sent differently on each. */
    enum Client {
        /** A {@code RedisClient}, as the limiter builds for a URL: pipelines on connections of its pool. */
        REDIS_CLIENT(Faults::redisClient),
        /** A client of another kind: pipelines are the client's own. */
        OTHER(Faults::otherClient);

        private final BiFunction<Faults, String, UnifiedJedis> create;

        Client(BiFunction<Faults, String, UnifiedJedis> create) {
            this.create = create;
        }
    }

    private final ValkeyServer valkey;
    private final Faults faults = new Faults();

    ClientErrorTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** The probe that an Error ended left the breaker open for good: Valkey answered, nobody asked it. */
    @Test
    void anErrorInTheProbeFailsTheProbeAndCallsResume() throws Exception {
        try (UnifiedJedis client = faults.redisClient(valkey.url());
             ValkeyRateLimiter valkeyLimiter = ValkeyRateLimiter.builder().client(client)
                     .circuitBreaker(3, OPEN_FOR).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(valkeyLimiter).build()) {
            assertThat(limiter.acquire(RULE, "k").basis()).isEqualTo(Decision.Basis.SHARED);
            for (int i = 0; i < 20 && !valkeyLimiter.isBreakerOpen(); i++) {
                faults.failNextCall(new JedisConnectionException("injected: connection reset"));
                assertThat(limiter.acquire(RULE, "k").basis()).isEqualTo(Decision.Basis.SKIPPED);
            }
            assertThat(valkeyLimiter.isBreakerOpen()).isTrue();
            faults.clear();

            Thread.sleep(OPEN_FOR.toMillis() + 100);
            OutOfMemoryError injected = new OutOfMemoryError("injected into the probe");
            faults.failNextCall(injected);
            Decision[] probe = new Decision[1];
            Throwable thrown = catchThrowable(() -> probe[0] = limiter.acquire(RULE, "k"));

            Thread.sleep(OPEN_FOR.toMillis() + 100);
            Decision after = limiter.acquire(RULE, "k");
            assertThat(after.basis()).as("Valkey answers: calls resume after the failed probe's open period")
                    .isEqualTo(Decision.Basis.SHARED);
            assertThat(valkeyLimiter.isBreakerOpen()).isFalse();
            assertThat(thrown).as("what the probe's Error made the limiter throw, instead of the rule's policy")
                    .isNull();
            assertThat(probe[0].basis()).as("the probe's request, decided by its rule's policy")
                    .isEqualTo(Decision.Basis.SKIPPED);

            // Without the resilient limiter: a failure of the store, the Error as its cause.
            faults.failNextCall(injected);
            assertThat(catchThrowable(() -> valkeyLimiter.acquire(RULE, "k")))
                    .isInstanceOf(RateLimitException.class).hasRootCause(injected);
        }
    }

    /**
     * An Error while a pipeline is sent, its calls written and no reply read: every caller
     * whose call it carried fails at once (they used to wait out their bound for replies nobody
     * would hand them), and the pipelines keep working, each caller getting its own reply (the
     * unread replies must not be read by the next calls on that connection).
     */
    @ParameterizedTest
    @EnumSource(Client.class)
    void anErrorWhileSendingAPipelineFailsItsWholeBatchAtOnce(Client kind) throws Exception {
        int queued = 6;
        int sharedByTheError = 0;
        Queue<String> wrong = new ConcurrentLinkedQueue<>();
        try (UnifiedJedis client = kind.create.apply(faults, valkey.url());
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().client(client).pipelines(1)
                     .circuitBreaker(0, OPEN_FOR).build()) {
            limiter.acquire(RULE, "warm");
            // A batch needs callers queued behind a call on the wire; a round in which fewer
            // than two queued in time (a busy machine) is simply played again.
            for (int round = 0; round < 20 && sharedByTheError < 3 * queued; round++) {
                OutOfMemoryError injected = new OutOfMemoryError("injected into pipeline " + round);
                CountDownLatch release = faults.holdNextCall();
                Thread first = new Thread(() -> catchThrowable(() -> limiter.acquire(RULE, "first")));
                first.start();
                faults.awaitHeld();
                CountDownLatch ready = new CountDownLatch(queued);
                AtomicInteger byTheError = new AtomicInteger();
                List<Thread> callers = new ArrayList<>();
                for (int t = 0; t < queued; t++) {
                    String key = "caller-" + t;
                    Thread caller = new Thread(() -> {
                        ready.countDown();
                        Throwable failure = catchThrowable(() -> limiter.acquire(RULE, key));
                        if (failure == null || isWithdrawn(failure)) {
                            return; // answered, or never sent: not this test's concern
                        }
                        if (failure instanceof RateLimitException && hasCause(failure, injected)) {
                            byTheError.incrementAndGet();
                        } else {
                            wrong.add(key + ": " + failure);
                        }
                    });
                    caller.start();
                    callers.add(caller);
                }
                ready.await();
                Thread.sleep(20); // they queue behind the held call
                faults.failNextPipeline(injected);
                release.countDown();
                first.join(10_000);
                for (Thread caller : callers) {
                    caller.join(10_000);
                    assertThat(caller.isAlive()).as("a caller still waits after 10 s").isFalse();
                }
                faults.clear();
                if (byTheError.get() >= 2) {
                    sharedByTheError += byTheError.get();
                }
            }
            assertThat(wrong).as("callers of a pipeline that threw an Error, failed otherwise").isEmpty();
            assertThat(sharedByTheError).as("callers failed by an Error of a pipeline they shared").isPositive();

            // The pipelines still work, and each caller gets its own reply: every thread's
            // limit differs, so a reply meant for another call shows in its numbers. A call that
            // missed its bound (a queued call waits at most 120 ms for a given client, which a
            // busy machine can pass) may have run or not: it counts as maybe taken, and the
            // thread goes on until it has its answers.
            Queue<String> after = new ConcurrentLinkedQueue<>();
            List<Thread> load = new ArrayList<>();
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (int t = 0; t < 12; t++) {
                int limit = 10 + t;
                Rule own = Rule.of("own-" + t, Algorithm.FIXED_WINDOW, limit, Duration.ofHours(1));
                Thread thread = new Thread(() -> {
                    int taken = 0;
                    int maybe = 0;
                    for (int answered = 0; answered < 2 * limit; ) {
                        if (System.nanoTime() - until > 0) {
                            after.add(own.name() + ": " + answered + " answers in 30 s, " + maybe + " calls past their bound");
                            return;
                        }
                        Decision[] decision = new Decision[1];
                        Throwable failure = catchThrowable(() -> decision[0] = limiter.acquire(own, "after"));
                        if (failure != null) {
                            if (missedItsBound(failure)) {
                                maybe++;
                            } else {
                                after.add(own.name() + " answer " + answered + ": " + failure);
                            }
                            continue;
                        }
                        Decision d = decision[0];
                        // Units counted before this call: every one taken, and any of the maybe.
                        boolean right = d.limit() == limit && (d.allowed()
                                ? d.remaining() <= limit - 1 - taken && d.remaining() >= limit - 1 - taken - maybe
                                : d.remaining() == 0 && taken + maybe >= limit);
                        if (!right) {
                            after.add(own.name() + " answer " + answered + " (" + taken + " taken, " + maybe
                                    + " maybe): " + d);
                        }
                        if (d.allowed()) {
                            taken++;
                        }
                        answered++;
                    }
                });
                thread.start();
                load.add(thread);
            }
            for (Thread thread : load) {
                thread.join(30_000);
            }
            assertThat(after).as("failures and wrong replies once the Error is past").isEmpty();
        }
    }

    /** A queued call withdrawn because no pipeline was free in time: it was never sent. */
    private static boolean isWithdrawn(Throwable failure) {
        return failure instanceof RateLimitException && failure.getMessage() != null
                && failure.getMessage().contains("no pipeline was free");
    }

    /** A call that failed for its time bound: withdrawn, its pipeline's reply late, or a read timeout. */
    private static boolean missedItsBound(Throwable failure) {
        if (!(failure instanceof RateLimitException)) {
            return false;
        }
        for (Throwable at = failure; at != null; at = at.getCause()) {
            String message = String.valueOf(at.getMessage());
            if (at instanceof java.net.SocketTimeoutException || message.contains("no pipeline was free")
                    || message.contains("did not come within") || message.contains("no time was left")) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasCause(Throwable failure, Throwable cause) {
        for (Throwable at = failure; at != null; at = at.getCause()) {
            if (at == cause) {
                return true;
            }
        }
        return false;
    }
}
