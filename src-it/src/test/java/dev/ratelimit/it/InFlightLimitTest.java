package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Reservation;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code algorithm=concurrency}: at most {@code limit} requests in progress at once across every
 * instance, each lease released after its response (async and thrown ones included), a lease
 * of an instance that died coming back at its timeout, and a release Valkey cannot take made
 * once it answers again, never counted twice.
 */
@ExtendWith(ValkeyExtension.class)
class InFlightLimitTest {

    private final ValkeyServer valkey;

    InFlightLimitTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
        JettyApp.OutcomeServlet.resetInFlight();
    }

    private JettyApp app() throws Exception {
        return JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "inflight",
                "ratelimit.rule.inflight.match", "/outcome", "ratelimit.rule.inflight.algorithm", "concurrency",
                "ratelimit.rule.inflight.limit", "4", "ratelimit.rule.inflight.key", "global",
                "ratelimit.rule.inflight.permit-timeout", "30s",
                // Each burst starts from free slots: a remembered rejection would answer for Valkey.
                "ratelimit.deny-cache.enabled", "false"));
    }

    /**
     * Sends {@code n} requests at once, alternating between the apps, and counts the statuses.
     * Those the application runs ({@code hold=1}) are held there until every request of the
     * burst has been decided, answered or in progress, however slowly they arrive.
     */
    private static Map<Integer, Integer> burst(List<JettyApp> apps, String query, int n) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
        JettyApp.OutcomeServlet.holdRequests();
        try {
            for (int i = 0; i < n; i++) {
                inFlight.add(JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(apps.get(i % apps.size()).uri("/outcome?" + query))
                        .timeout(Duration.ofSeconds(40)).build(), HttpResponse.BodyHandlers.ofString()));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (inFlight.stream().filter(CompletableFuture::isDone).count() + JettyApp.OutcomeServlet.inFlight() < n
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } finally {
            JettyApp.OutcomeServlet.releaseHeld();
        }
        Map<Integer, Integer> byStatus = new TreeMap<>();
        for (CompletableFuture<HttpResponse<String>> response : inFlight) {
            byStatus.merge(response.get().statusCode(), 1, Integer::sum);
        }
        return byStatus;
    }

    @Test
    void twiceTheLimitFromTwoServersNeverHasMoreThanTheLimitInProgress() throws Exception {
        Rule rule = Rule.of("inflight", Algorithm.CONCURRENCY, 4, Duration.ofSeconds(30));
        try (JettyApp first = app(); JettyApp second = app(); ValkeyRateLimiter leases = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2))).build()) {
            List<JettyApp> both = List.of(first, second);
            HttpResponse<String> probe = first.get("/outcome");
            assertThat(probe.headers().firstValue("RateLimit-Policy")).hasValue("\"inflight\";q=4;qu=\"concurrent-requests\"");

            // The servlet counts the requests in progress in both servers (one JVM, one class).
            for (String kind : List.of("hold=1", "async=1&hold=1", "throw=1&hold=1")) {
                JettyApp.OutcomeServlet.resetInFlight();
                Map<Integer, Integer> statuses = burst(both, kind, 8);
                System.out.printf("in-flight limit 4, 8 at once over two servers (%s): %s, at most %d in progress%n",
                        kind, statuses, JettyApp.OutcomeServlet.maxInFlight());
                assertThat(JettyApp.OutcomeServlet.maxInFlight()).as("most in progress at once, %s", kind).isEqualTo(4);
                assertThat(statuses.get(429)).as("rejected, %s", kind).isEqualTo(4);
                // Every lease is released once its response is complete (an async one's after the
                // client may have it): the next burst finds 4 free slots.
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (leases.peek(rule, "global", 1).remaining() < 4 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(leases.peek(rule, "global", 1).remaining()).as("free slots after %s", kind).isEqualTo(4);
            }
            assertThat(burst(both, "sleep=0", 1)).isEqualTo(Map.of(200, 1));
        }
    }

    /**
     * With the deny cache on, as by default: a rejection by a concurrency rule is not remembered,
     * since its retry-after (the lease timeout) is only an upper bound. Once the slow requests
     * finish, the next ones pass at once instead of being turned away for 60 s.
     */
    @Test
    void aConcurrencyRejectionIsNotRememberedByTheDenyCache() throws Exception {
        try (JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "inflight",
                "ratelimit.rule.inflight.match", "/outcome", "ratelimit.rule.inflight.algorithm", "concurrency",
                "ratelimit.rule.inflight.limit", "2", "ratelimit.rule.inflight.key", "global"))) {
            List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                slow.add(JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(app.uri("/outcome?sleep=1000"))
                        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (JettyApp.OutcomeServlet.maxInFlight() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            HttpResponse<String> third = app.get("/outcome");
            assertThat(third.statusCode()).as("both slots taken").isEqualTo(429);
            assertThat(third.headers().firstValue("Retry-After")).hasValue("60");
            for (CompletableFuture<HttpResponse<String>> response : slow) {
                assertThat(response.get().statusCode()).isEqualTo(200);
            }
            assertThat(app.get("/outcome").statusCode()).as("both slots free again").isEqualTo(200);
            assertThat(app.get("/outcome").statusCode()).isEqualTo(200);
        }
    }

    /** Another JVM holding two of the four slots: the two servers share the other two. */
    @Test
    void leasesHeldByAnotherJvmCountForEveryServer() throws Exception {
        Process holder = holder("inflight", 4, 30_000, 2, "global");
        try (JettyApp first = app(); JettyApp second = app()) {
            awaitHeld(holder, 2);
            Map<Integer, Integer> statuses = burst(List.of(first, second), "hold=1", 8);
            System.out.printf("in-flight limit 4, 2 held by another JVM, 8 at once over two servers: %s, at most %d "
                    + "in progress here%n", statuses, JettyApp.OutcomeServlet.maxInFlight());
            assertThat(statuses).isEqualTo(Map.of(200, 2, 429, 6));
            assertThat(JettyApp.OutcomeServlet.maxInFlight()).isEqualTo(2);
        } finally {
            holder.destroyForcibly();
        }
    }

    /** A JVM that takes leases, says so, and waits to be killed: {@link LeaseHoldingProcess}. */
    private Process holder(String rule, long limit, long timeoutMillis, int leases, String key) throws Exception {
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LeaseHoldingProcess.class.getName(),
                valkey.url(), rule, Long.toString(limit), Long.toString(timeoutMillis),
                Integer.toString(leases), key).redirectErrorStream(true).start();
    }

    private static void awaitHeld(Process holder, int leases) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("held ")) {
            // the JVM's start-up chatter
        }
        assertThat(line).isEqualTo("held " + leases);
    }

    @Test
    void aProcessThatDiesHoldingLeasesGivesThemBackAtTheLeaseTimeout() throws Exception {
        Rule rule = Rule.of("leases", Algorithm.CONCURRENCY, 3, Duration.ofMillis(1_500));
        Process holder = holder(rule.name(), 3, 1_500, 3, "shared");
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                .withSocketTimeout(Duration.ofSeconds(2))).build()) {
            awaitHeld(holder, 3);
            long killedAt = System.nanoTime();
            holder.destroyForcibly().waitFor();
            assertThat(limiter.acquire(rule, "shared").allowed()).as("the dead process's leases still count").isFalse();
            Decision free = limiter.peek(rule, "shared", 1);
            while (free.remaining() < 3 && System.nanoTime() - killedAt < Duration.ofSeconds(10).toNanos()) {
                Thread.sleep(20);
                free = limiter.peek(rule, "shared", 1);
            }
            long millis = (System.nanoTime() - killedAt) / 1_000_000;
            System.out.printf("leases of a killed process all came back %d ms after the kill (timeout 1500 ms)%n",
                    millis);
            assertThat(free.remaining()).isEqualTo(3);
            assertThat(millis).as("within the lease timeout of the kill").isLessThan(1_500 + 1_000);
            int allowed = 0;
            for (int i = 0; i < 5; i++) {
                allowed += limiter.reserve(rule, "shared").allowed() ? 1 : 0;
            }
            assertThat(allowed).as("all three slots, and no more").isEqualTo(3);
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void aReleaseValkeyCannotTakeIsMadeOnceItAnswersAgainAndNeverCountedTwice() throws Exception {
        Rule rule = Rule.of("paused", Algorithm.CONCURRENCY, 2, Duration.ofSeconds(60));
        AtomicInteger dropped = new AtomicInteger();
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(ValkeyRateLimiter.builder()
                        // Long enough for the calls that must be answered on a busy machine; the
                        // pause is longer than the two releases' timeouts together, with room.
                        .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofMillis(500))
                                .withConnectTimeout(Duration.ofMillis(500))).build())
                .policy(rule, FailurePolicy.closed()).denyCache(0)
                .listener(new RateLimitListener() {
                    @Override
                    public void onEvent(String name, Event event) {
                        if (event == Event.REFUND_DROPPED) {
                            dropped.incrementAndGet();
                        }
                    }
                }).build()) {
            Reservation a = limiter.reserve(rule, "k");
            Reservation b = limiter.reserve(rule, "k");
            assertThat(a.allowed() && b.allowed()).isTrue();
            valkey.pause(Duration.ofMillis(3_000));
            assertThat(a.commit()).isTrue();
            assertThat(b.cancel()).isEmpty();
            assertThat(dropped.get()).as("both releases failed, nothing thrown").isEqualTo(2);
            Thread.sleep(3_050);
            // The next decision first releases the two leases, long before their 60 s timeout.
            List<Reservation> held = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Reservation next = limiter.reserve(rule, "k");
                assertThat(next.decisions().all().get(0).basis()).isEqualTo(Decision.Basis.SHARED);
                if (next.allowed()) {
                    held.add(next);
                }
            }
            assertThat(held).as("both slots free again, and no more").hasSize(2);
            held.forEach(Reservation::cancel);
            Thread.sleep(150);
            assertThat(limiter.peek(rule, "k", 1).remaining()).as("released once each, never twice").isEqualTo(2);
        }
    }
}
