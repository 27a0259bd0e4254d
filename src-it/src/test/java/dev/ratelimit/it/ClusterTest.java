package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The limiter on a real three-node Valkey Cluster: keys spread over the nodes, limits stay exact. */
class ClusterTest {

    private static ValkeyCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = ValkeyCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @BeforeEach
    void empty() {
        cluster.flushAll();
    }

    private static ValkeyRateLimiter limiter() {
        return ValkeyRateLimiter.builder().settings(ValkeySettings.of(cluster.seedUrl()).withCluster(true)
                .withSocketTimeout(Duration.ofSeconds(2)).withConnectTimeout(Duration.ofSeconds(2))
                .withPoolMaxWait(Duration.ofSeconds(2))).build();
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void eightThreadsOnOneKeyGetExactlyTheLimitAndKeysSpreadOverTheNodes(Algorithm algorithm) throws Exception {
        Rule rule = Rule.of("cluster", algorithm, 100, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = limiter()) {
            AtomicInteger allowed = new AtomicInteger();
            AtomicInteger next = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                Thread thread = new Thread(() -> {
                    while (next.getAndIncrement() < 200) {
                        if (limiter.acquire(rule, "shared").allowed()) {
                            allowed.incrementAndGet();
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(allowed.get()).isEqualTo(100);

            for (int i = 0; i < 60; i++) {
                limiter.acquire(rule, "client-" + i);
            }
        }
        for (ValkeyServer node : cluster.nodes()) {
            try (Jedis jedis = node.connect()) {
                assertThat(jedis.dbSize()).as("keys on node %s", node.url()).isPositive();
            }
        }
    }

    @Test
    void claimsOnDifferentIdentitiesAreDecidedPerSlotAndRejectionsConsumeNothing() {
        Rule perIp = Rule.of("per-ip", Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1));
        Rule perUser = Rule.of("per-user", Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1));
        Rule perUserBurst = Rule.of("per-user-burst", Algorithm.GCRA, 10, Duration.ofMinutes(1));
        try (ValkeyRateLimiter limiter = limiter()) {
            List<Claim> claims = List.of(Claim.of(perIp, "ip:192.0.2.1"), Claim.of(perUser, "user:alice"),
                    Claim.of(perUserBurst, "user:alice"));
            assertThat(limiter.stateKey(perIp, "ip:192.0.2.1")).isNotEqualTo(limiter.stateKey(perUser, "user:alice"));
            assertThat(limiter.acquireAll(claims).allowed()).isTrue();
            assertThat(limiter.acquireAll(claims).allowed()).isTrue();
            Decisions third = limiter.acquireAll(claims);
            assertThat(third.allowed()).isFalse();
            assertThat(third.all()).extracting(d -> d.allowed()).containsExactly(true, false, true);
            // Rejected by the user rule: the address and burst rules, on other slots, took nothing.
            assertThat(limiter.peek(perIp, "ip:192.0.2.1", 1).remaining()).isEqualTo(3);
            assertThat(limiter.peek(perUserBurst, "user:alice", 1).remaining()).isEqualTo(8);
        }
    }

    /**
     * The review's case: a count-rejected rule whose group is called again to record a rejection
     * may allow by then (a window edge); the request must stay rejected, since the other group
     * was never charged. Every allowed request must be charged to every rule.
     */
    @Test
    void aRequestIsAllowedOnlyIfEveryGroupWasCharged() {
        Rule perIp = Rule.of("per-ip", Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(5)).withCountRejected(true);
        Rule perUser = Rule.of("per-user", Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = limiter()) {
            List<Claim> claims = List.of(Claim.of(perIp, "ip:192.0.2.1"), Claim.of(perUser, "user:alice"));
            int allowed = 0;
            int rejected = 0;
            long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            for (int i = 0; i < 3_000 && System.nanoTime() < until; i++) {
                Decisions decisions = limiter.acquireAll(claims);
                if (decisions.allowed()) {
                    allowed++;
                    assertThat(decisions.all()).allMatch(d -> d.allowed());
                } else {
                    rejected++;
                    assertThat(decisions.retryAfter()).isPositive();
                }
            }
            long charged = 1_000_000 - limiter.peek(perUser, "user:alice", 1).remaining();
            System.out.println("cluster, count-rejected across slots: " + allowed + " allowed, " + rejected
                    + " rejected, " + charged + " charged to per-user");
            assertThat(rejected).as("the loop must meet rejections to test anything").isPositive();
            assertThat(charged).as("requests charged to per-user").isEqualTo(allowed);
        }
    }

    /** A reservation spanning two slots gives back on both nodes' keys, one refund call per group. */
    @Test
    void aReservationAcrossSlotsIsGivenBackInEveryGroup() {
        Rule perIp = Rule.of("per-ip", Algorithm.SLIDING_LOG, 3, Duration.ofHours(1));
        Rule perUser = Rule.of("per-user", Algorithm.GCRA, 3, Duration.ofHours(1));
        try (ValkeyRateLimiter limiter = limiter()) {
            List<Claim> claims = List.of(Claim.of(perIp, "ip:192.0.2.1"), Claim.of(perUser, "user:alice"));
            assertThat(JedisClusterCRC16.getSlot(limiter.stateKey(perIp, "ip:192.0.2.1")))
                    .isNotEqualTo(JedisClusterCRC16.getSlot(limiter.stateKey(perUser, "user:alice")));
            Reservation reservation = limiter.reserveAll(claims);
            assertThat(reservation.allowed()).isTrue();
            assertThat(limiter.peek(perIp, "ip:192.0.2.1", 1).remaining()).isEqualTo(2);
            assertThat(reservation.cancel()).containsExactlyInAnyOrder("per-ip", "per-user");
            assertThat(limiter.peek(perIp, "ip:192.0.2.1", 1).remaining()).isEqualTo(3);
            assertThat(limiter.peek(perUser, "user:alice", 1).remaining()).isEqualTo(3);
        }
    }

    /**
     * A request's leases on one node and its window on another that stalls now and then: when
     * the window's group fails after the leases were taken, the leases go back, so nothing is
     * held once the requests are over (not until the 60 s lease timeout).
     */
    @Test
    void aLeaseTakenByOneSlotGroupIsGivenBackWhenAnotherGroupFails() throws Exception {
        Rule inFlight = Rule.of("in-flight", Algorithm.CONCURRENCY, 1_000, Duration.ofSeconds(60));
        Rule window = Rule.of("window", Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofHours(1));
        // A timeout the answered calls meet on a busy machine, and stalls three times as long.
        Duration timeout = Duration.ofMillis(250);
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(cluster.seedUrl()).withCluster(true).withSocketTimeout(timeout))
                .circuitBreaker(0, Duration.ofSeconds(1)).build()) {
            ValkeyServer leaseNode = cluster.primaryOf(JedisClusterCRC16.getSlot(limiter.stateKey(inFlight, "global")));
            String user = null;
            ValkeyServer stalled = null;
            for (int i = 0; stalled == null; i++) {
                ValkeyServer node = cluster.primaryOf(JedisClusterCRC16.getSlot(limiter.stateKey(window, "user:" + i)));
                if (node != leaseNode) {
                    user = "user:" + i;
                    stalled = node;
                }
            }
            List<Claim> claims = List.of(Claim.of(inFlight, "global"), Claim.of(window, user));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger failed = new AtomicInteger();
            AtomicInteger allowed = new AtomicInteger();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread worker = new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            Reservation request = limiter.reserveAll(claims);
                            if (request.allowed()) {
                                allowed.incrementAndGet();
                                request.commit();
                            }
                        } catch (RuntimeException e) {
                            failed.incrementAndGet();
                        }
                    }
                });
                worker.start();
                workers.add(worker);
            }
            long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            while (System.nanoTime() < until) {
                stalled.stall(timeout.multipliedBy(3));
                Thread.sleep(250);
            }
            stop.set(true);
            for (Thread worker : workers) {
                worker.join();
            }
            System.out.printf("cluster, leases and a stalling window node: %d allowed, %d failed%n", allowed.get(),
                    failed.get());
            assertThat(failed.get()).as("the stalls must fail calls to test anything").isPositive();
            assertThat(allowed.get()).isPositive();
            // Lost leases are released before a later decision, at most every 100 ms. A call of
            // these that a busy machine times out is one more lost lease, released the same way.
            long free = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (free < 1_000 && System.nanoTime() < deadline) {
                Thread.sleep(150);
                try {
                    limiter.reserveAll(claims).commit();
                    free = limiter.peek(inFlight, "global", 1).remaining();
                } catch (RateLimitException e) {
                    free = 0;
                }
            }
            assertThat(free).as("no request in progress: no lease held").isEqualTo(1_000);
        }
    }

    @Test
    void theFilterRunsOnTheCluster() throws Exception {
        Map<String, String> settings = JettyApp.settings(cluster.seedUrl(), "ratelimit.valkey.cluster", "true",
                "ratelimit.rules", "api,user", "ratelimit.rule.api.limit", "3", "ratelimit.rule.api.window", "1m",
                "ratelimit.rule.user.limit", "2", "ratelimit.rule.user.window", "1m",
                "ratelimit.rule.user.key", "principal");
        try (JettyApp app = JettyApp.start(settings)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                HttpResponse<String> response = app.get("/", "X-Test-User", "bob");
                statuses.add(response.statusCode());
            }
            assertThat(statuses).containsExactly(200, 200, 429, 429);
            assertThat(app.get("/").statusCode()).as("the address rule took only the allowed two").isEqualTo(200);
            assertThat(app.get("/").statusCode()).isEqualTo(429);
        }
    }
}
