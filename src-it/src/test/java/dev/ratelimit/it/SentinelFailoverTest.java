package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
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
 * A Sentinel-managed primary killed (SIGKILL) while eight threads are held to a limit: every
 * request is answered within its bounds by the rule's on-failure policy during the failover,
 * the limiter finds the promoted replica by itself, and the limit is enforced again, on the
 * count the replica had.
 */
class SentinelFailoverTest {

    private static final int LIMIT = 1_500;
    private static final int THREADS = 8;

    private static ValkeySentinels topology;

    @BeforeAll
    static void start() {
        topology = ValkeySentinels.start();
    }

    @AfterAll
    static void stop() {
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void killingThePrimaryUnderLoadIsAnsweredByPolicyThenTheReplicaEnforcesTheLimit() throws Exception {
        Rule rule = Rule.of("failover", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofHours(1));
        ValkeySettings settings = ValkeySettings.of("redis://sentinel-managed")
                .withSentinel(ValkeySentinels.MASTER, topology.sentinelNodes())
                .withConnectTimeout(Duration.ofMillis(50)).withSocketTimeout(Duration.ofMillis(50))
                .withPoolMaxWait(Duration.ofMillis(20));
        AtomicInteger sharedAllowed = new AtomicInteger();
        AtomicInteger byPolicy = new AtomicInteger();
        AtomicInteger byPolicyAllowed = new AtomicInteger();
        AtomicLong slowestNanos = new AtomicLong();
        AtomicLong killedAt = new AtomicLong();
        AtomicLong firstSharedAfterKill = new AtomicLong();
        Queue<Throwable> escaped = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        try (ValkeyRateLimiter valkey = ValkeyRateLimiter.builder().settings(settings)
                .circuitBreaker(5, Duration.ofMillis(500)).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(valkey)
                     .policy(rule.name(), FailurePolicy.open()).denyCache(0).build()) {
            List<Thread> load = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Thread thread = new Thread(() -> {
                    while (!stop.get()) {
                        long began = System.nanoTime();
                        try {
                            Decision decision = limiter.acquire(rule, "shared");
                            long took = System.nanoTime() - began;
                            slowestNanos.accumulateAndGet(took, Math::max);
                            if (decision.basis() == Decision.Basis.SHARED) {
                                if (decision.allowed()) {
                                    sharedAllowed.incrementAndGet();
                                }
                                if (killedAt.get() != 0) {
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
                        // About 100 requests a second per thread: the limit is reached after the failover.
                        sleep(10);
                    }
                });
                thread.start();
                load.add(thread);
            }
            sleep(1_000);
            int oldPrimary = ValkeySentinels.port(topology.primary());
            killedAt.set(System.nanoTime());
            topology.primary().stop();
            long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            while (firstSharedAfterKill.get() == 0 && System.nanoTime() < deadline) {
                sleep(50);
            }
            // Then long enough after the promotion for the limit to be reached and enforced.
            sleep(3_000);
            stop.set(true);
            for (Thread thread : load) {
                thread.join(10_000);
            }
            assertThat(firstSharedAfterKill.get()).as("a shared decision after the kill").isPositive();
            long recoveryMillis = (firstSharedAfterKill.get() - killedAt.get()) / 1_000_000;
            int newPrimary = topology.currentPrimaryPort().orElseThrow();
            long counted;
            try (Jedis promoted = topology.replica().connect()) {
                String value = promoted.get(valkey.stateKey(rule, "shared"));
                counted = Long.parseLong(value.substring(value.indexOf(':') + 1));
            }
            // Increments the old primary acknowledged and never replicated are lost with it.
            long lost = sharedAllowed.get() - counted;
            System.out.printf("sentinel failover: first shared decision %d ms after the kill; %d requests answered "
                    + "by policy (open: %d allowed); %d allowed by Valkey against a limit of %d, %d of them lost "
                    + "with the old primary; slowest call %d ms%n", recoveryMillis, byPolicy.get(),
                    byPolicyAllowed.get(), sharedAllowed.get(), LIMIT, lost, slowestNanos.get() / 1_000_000);

            assertThat(escaped).as("exceptions that reached the caller").isEmpty();
            assertThat(newPrimary).as("the sentinels promoted the replica").isEqualTo(ValkeySentinels.port(topology.replica()))
                    .isNotEqualTo(oldPrimary);
            assertThat(byPolicy.get()).as("the kill must make some requests fall to the policy").isPositive();
            assertThat(counted).as("the promoted replica's count never passes the limit").isLessThanOrEqualTo(LIMIT);
            assertThat(sharedAllowed.get()).as("the limit was reached and enforced after the failover")
                    .isGreaterThanOrEqualTo(LIMIT);
            assertThat(lost).as("increments lost with the old primary: its last replication lag").isBetween(0L, 50L);
            assertThat(Duration.ofNanos(slowestNanos.get())).as("the slowest call").isLessThan(Duration.ofMillis(1_000));

            // A new key on the promoted primary: exactly its limit.
            Rule small = Rule.of("after-failover", Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1));
            int allowed = 0;
            for (int i = 0; i < 8; i++) {
                Decision decision = limiter.acquire(small, "fresh");
                assertThat(decision.basis()).isEqualTo(Decision.Basis.SHARED);
                allowed += decision.allowed() ? 1 : 0;
            }
            assertThat(allowed).isEqualTo(5);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
