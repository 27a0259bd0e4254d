package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A slot moved to another primary ({@code SETSLOT IMPORTING/MIGRATING}, {@code MIGRATE} a key at
 * a time, {@code SETSLOT NODE}) while eight threads decide rules of every algorithm whose keys are
 * all in that slot, alone and two at once: no decision fails with MOVED, ASK or TRYAGAIN, and
 * every rule allows exactly its limit.
 */
class ClusterMigrationTest {

    private static final int LIMIT = 300;
    private static final int THREADS = 8;
    private static final String KEY = "moving";

    private static ValkeyCluster cluster;

    @BeforeAll
    static void start() {
        cluster = ValkeyCluster.start(3);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aSlotMigratedUnderLoadFailsNoDecisionAndKeepsEveryLimitExact() throws Exception {
        // A day, so that no epoch-aligned window rolls over during the test.
        List<Rule> rules = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            rules.add(Rule.of("alone-" + algorithm.name().toLowerCase(), algorithm, LIMIT, Duration.ofDays(1)));
        }
        // Two rules always decided together: the call names two keys of the slot, so once one of
        // them has moved and the other not, the source answers TRYAGAIN.
        Rule pairFirst = Rule.of("pair-first", Algorithm.TOKEN_BUCKET, LIMIT, Duration.ofDays(1));
        Rule pairSecond = Rule.of("pair-second", Algorithm.SLIDING_LOG, 2 * LIMIT, Duration.ofDays(1));
        Map<String, AtomicInteger> allowed = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> rejected = new ConcurrentHashMap<>();
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger calls = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        ValkeySettings settings = ValkeySettings.of(cluster.seedUrl()).withCluster(true)
                .withConnectTimeout(Duration.ofSeconds(1)).withSocketTimeout(Duration.ofSeconds(1))
                .withPoolMaxWait(Duration.ofSeconds(1));
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(settings).build()) {
            int slot = JedisClusterCRC16.getSlot(limiter.stateKey(pairFirst, KEY));
            for (Rule rule : rules) {
                assertThat(JedisClusterCRC16.getSlot(limiter.stateKey(rule, KEY))).as("every key in one slot").isEqualTo(slot);
            }
            ValkeyServer source = cluster.primaryOf(slot);
            ValkeyServer target = cluster.nodes().stream().filter(node -> node != source).findFirst().orElseThrow();
            // Other keys in the slot, so that the migration takes a while and the limiter's keys
            // move at different moments.
            try (Jedis jedis = source.connect()) {
                for (int i = 0; i < 40; i++) {
                    jedis.set("{" + KEY + "}:filler:" + i, "x");
                }
            }
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Thread thread = new Thread(() -> {
                    int turn = 0;
                    while (!stop.get()) {
                        try {
                            calls.incrementAndGet();
                            if (turn % (rules.size() + 1) == rules.size()) {
                                Decisions both = limiter.acquireAll(List.of(new Claim(pairFirst, KEY, 1),
                                        new Claim(pairSecond, KEY, 1)));
                                (both.allowed() ? allowed : rejected).computeIfAbsent(pairFirst.name(),
                                        name -> new AtomicInteger()).incrementAndGet();
                            } else {
                                Rule rule = rules.get(turn % (rules.size() + 1));
                                Decision decision = limiter.acquire(rule, KEY);
                                (decision.allowed() ? allowed : rejected).computeIfAbsent(rule.name(),
                                        name -> new AtomicInteger()).incrementAndGet();
                            }
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                        turn++;
                        FailoverLoad.sleep(5);
                    }
                });
                thread.start();
                threads.add(thread);
            }
            FailoverLoad.sleep(300);
            // One single rule's key moves alone, then the pair's first key, then its second, each
            // 300 ms before the next: meanwhile every call of that single rule finds its key gone
            // (ASK), and for 300 ms every two-key call meets one moved key and one not (the source
            // answers TRYAGAIN, tried again within the socket timeout of 1 s). The pair's second key
            // moves right after, not among the rest, whose migration may take longer than that on
            // a busy machine.
            int moved = cluster.migrateSlot(slot, target, 1, Duration.ofMillis(5),
                    List.of(limiter.stateKey(rules.get(0), KEY), limiter.stateKey(pairFirst, KEY),
                            limiter.stateKey(pairSecond, KEY)),
                    Duration.ofMillis(300));
            // Then until every rule has reached its limit and refused a few more (at most 30 s: a
            // fixed 2.5 s was too short for a busy machine's slower threads).
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline && Stream.concat(rules.stream(), Stream.of(pairFirst))
                    .anyMatch(rule -> rejected.getOrDefault(rule.name(), new AtomicInteger()).get() < 20)) {
                FailoverLoad.sleep(50);
            }
            stop.set(true);
            for (Thread thread : threads) {
                thread.join(10_000);
            }
            String errors;
            try (Jedis jedis = source.connect()) {
                // ERR lines, if any, are the first calls' "Function not found" before the library was loaded.
                errors = jedis.info("errorstats");
            }
            System.out.printf("cluster migration: %d keys moved one at a time during %d calls; allowed per rule %s; "
                    + "%d failures; the source's replies: %s%n", moved, calls.get(), allowed, failures.size(),
                    errors.replaceAll("\\s+", " ").trim());

            assertThat(failures).as("decisions that failed during the migration").isEmpty();
            assertThat(errors).as("the source redirected calls, and refused some two-key calls for a moment")
                    .contains("errorstat_ASK").contains("errorstat_TRYAGAIN");
            assertThat(cluster.primaryOf(slot)).as("the slot moved").isSameAs(target);
            assertThat(moved).as("keys moved: the fillers and the limiter's").isGreaterThanOrEqualTo(40 + rules.size() + 2);
            for (Rule rule : rules) {
                assertThat(allowed.get(rule.name())).as("allowed by %s", rule.name()).hasValue(LIMIT);
            }
            assertThat(allowed.get(pairFirst.name())).as("allowed by the pair").hasValue(LIMIT);
            try (Jedis jedis = target.connect(); Jedis old = source.connect()) {
                for (Rule rule : rules) {
                    assertThat(jedis.exists(limiter.stateKey(rule, KEY))).as("%s's state on the target", rule.name()).isTrue();
                }
                assertThat(old.clusterCountKeysInSlot(slot)).as("keys of the slot left on the source").isZero();
            }
        }
    }
}
