package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local leases beside a reset and an outage: a reset drops the instance's own lease (exactly the
 * limit is admitted after it); a permit lost in a stall is released once Valkey answers; a cancel
 * while Valkey is paused counts nothing twice; a peek answers as the next request does while the
 * store is down, the lease serving it under any failure policy.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseResetOutageTest {

    private final ValkeyServer server;

    LeaseResetOutageTest(ValkeyServer server) {
        this.server = server;
    }

    private ValkeyRateLimiter valkey(Rule rule) {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(server.url()).withSocketTimeout(Duration.ofMillis(300)))
                .localLease(rule, 8, Duration.ofSeconds(20))
                .build();
    }

    /** Valkey down, a lease holding units: peek must say what the next acquire gets. */
    @ParameterizedTest
    @ValueSource(strings = {"closed", "open"})
    void peekAgreesWithAcquireWhileLeaseServesDuringOutage(String policy) throws Exception {
        Rule rule = Rule.of("le-out-" + policy, Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
        String key = "k" + System.nanoTime();
        try (RateLimiter limiter = ResilientRateLimiter.builder(valkey(rule))
                .policy(rule, policy.equals("closed") ? FailurePolicy.closed() : FailurePolicy.open())
                .build()) {
            for (int i = 0; i < 6; i++) {
                assertThat(limiter.acquire(rule, key).allowed()).isTrue();
            }
            Decision before = limiter.peek(rule, key, 1);
            server.stop();
            try {
                List<String> trace = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    Decision peek = limiter.peek(rule, key, 1);
                    Decision got = limiter.acquire(rule, key);
                    trace.add("peek " + peek.allowed() + "/" + peek.basis() + " acquire " + got.allowed() + "/" + got.basis());
                }
                assertThat(trace).as("before outage peek %s", before).allMatch(t -> {
                    String[] p = t.split(" ");
                    return p[1].split("/")[0].equals(p[3].split("/")[0]);
                });
            } finally {
                server.start();
            }
        }
    }

    /** A reset on the instance that holds a lease drops it: then exactly the limit is admitted. */
    @ParameterizedTest
    @ValueSource(strings = {"TOKEN_BUCKET", "GCRA", "FIXED_WINDOW"})
    void resetDropsOwnLease(String algo) {
        Rule rule = Rule.of("le-reset-" + algo.toLowerCase().replace('_', '-'), Algorithm.valueOf(algo), 20, Duration.ofHours(1));
        String key = "k" + System.nanoTime();
        try (ValkeyRateLimiter a = valkey(rule)) {
            for (int i = 0; i < 7; i++) {
                assertThat(a.acquire(rule, key).allowed()).isTrue();
            }
            a.reset(rule, key);
            Decision peek = a.peek(rule, key, 1);
            int admitted = 0;
            for (int i = 0; i < 30; i++) {
                if (a.acquire(rule, key).allowed()) {
                    admitted++;
                }
            }
            assertThat(admitted).as("after reset, peek said remaining %d", peek.remaining()).isEqualTo(20);
            assertThat(peek.remaining()).isEqualTo(20);
        }
    }

    /** Through the filter: a lost concurrency reply during a stall does not hold the slot afterwards. */
    @Test
    void filterLostPermitReleased() throws Exception {
        server.flushAll();
        Map<String, String> s = JettyApp.settings(server.url(), "ratelimit.valkey.timeout", "100ms",
                "ratelimit.breaker.failures", "0",
                "ratelimit.rules", "conc", "ratelimit.rule.conc.algorithm", "concurrency",
                "ratelimit.rule.conc.limit", "1", "ratelimit.rule.conc.key", "global",
                "ratelimit.rule.conc.on-failure", "closed");
        try (JettyApp app = JettyApp.start(s)) {
            assertThat(app.get("/x").statusCode()).isEqualTo(200);
            CompletableFuture<Void> stall = CompletableFuture.runAsync(() -> server.stall(Duration.ofMillis(1200)));
            Thread.sleep(150);
            int during = app.get("/x").statusCode();
            stall.get();
            List<Integer> after = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Thread.sleep(120);
                after.add(app.get("/x").statusCode());
            }
            assertThat(during).isEqualTo(503);
            assertThat(after).as("after the stall").containsOnly(200);
        }
    }

    /** Reservation from the store; Valkey paused during cancel: dropped, no throw, no double count. */
    @Test
    void cancelDuringPauseIsDroppedNotThrown() throws Exception {
        Rule rule = Rule.of("le-cancel", Algorithm.FIXED_WINDOW, 3, Duration.ofHours(1));
        String key = "k" + System.nanoTime();
        try (RateLimiter limiter = ResilientRateLimiter.builder(ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(server.url()).withSocketTimeout(Duration.ofMillis(100))).build())
                .policy(rule, FailurePolicy.local(rule)).build()) {
            Reservation r = limiter.reserve(rule, key);
            assertThat(r.allowed()).isTrue();
            server.pause(Duration.ofMillis(600));
            List<String> cancelled = r.cancel();
            Thread.sleep(700);
            int admitted = 0;
            for (int i = 0; i < 5; i++) {
                Decision d = limiter.acquire(rule, key);
                if (d.allowed()) {
                    admitted++;
                }
                assertThat(d.basis()).isEqualTo(Decision.Basis.SHARED);
            }
            // refund dropped: 1 stays counted -> 2 more; refund landed -> 3 more
            assertThat(admitted).as("cancel returned %s", cancelled).isEqualTo(cancelled.isEmpty() ? 2 : 3);
        }
    }
}
