package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rules that count by the response ({@code count-when}, {@code refund-when}) on real Jetty and
 * Valkey: the units are reserved before the application runs, so concurrent requests cannot all
 * pass before any is counted, and given back after a response that must not count, async ones
 * included.
 */
@ExtendWith(ValkeyExtension.class)
class OutcomeCountingTest {

    private final ValkeyServer valkey;

    OutcomeCountingTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private JettyApp app(String algorithm, long limit, String condition) throws Exception {
        return JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "logins",
                "ratelimit.rule.logins.match", "/outcome", "ratelimit.rule.logins.algorithm", algorithm,
                "ratelimit.rule.logins.limit", Long.toString(limit), "ratelimit.rule.logins.window", "1d",
                "ratelimit.rule.logins." + condition.substring(0, condition.indexOf('=')),
                condition.substring(condition.indexOf('=') + 1)));
    }

    private static List<Integer> statuses(JettyApp app, String query, int times) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            statuses.add(app.get("/outcome?" + query).statusCode());
        }
        return statuses;
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
    void fiftyConcurrentFailedLoginsAgainstALimitOfFiveLetExactlyFiveThrough(Algorithm algorithm) throws Exception {
        try (JettyApp app = app(algorithm.id(), 5, "count-when=status:401")) {
            // Each failed login takes 300 ms, so all fifty are in flight at once: a limiter that
            // counted after the response would let every one of them through.
            List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                inFlight.add(JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(app.uri("/outcome?status=401&sleep=300"))
                        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()));
            }
            Map<Integer, Integer> byStatus = new TreeMap<>();
            for (CompletableFuture<HttpResponse<String>> response : inFlight) {
                byStatus.merge(response.get().statusCode(), 1, Integer::sum);
            }
            System.out.printf("%s, 50 concurrent failed logins, limit 5: %s%n", algorithm.id(), byStatus);
            assertThat(byStatus).isEqualTo(Map.of(401, 5, 429, 45));
        }
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
    void successfulLoginsDoNotCountFailedOnesDo(Algorithm algorithm) throws Exception {
        try (JettyApp app = app(algorithm.id(), 5, "count-when=status:401,403")) {
            assertThat(statuses(app, "status=200", 12)).as("successful logins").containsOnly(200);
            assertThat(statuses(app, "status=401", 3)).containsOnly(401);
            assertThat(statuses(app, "status=403", 2)).containsOnly(403);
            assertThat(statuses(app, "status=200", 1)).as("the five failures used the limit").containsOnly(429);
        }
    }

    @Test
    void refundWhenGivesBackServerErrorsAndRequestsTheApplicationThrewOn() throws Exception {
        try (JettyApp app = app("token-bucket", 3, "refund-when=status:5xx")) {
            assertThat(statuses(app, "status=503", 4)).containsOnly(503);
            assertThat(statuses(app, "throw=1", 2)).as("the container answers 500").containsOnly(500);
            assertThat(statuses(app, "status=404", 3)).as("a 4xx counts").containsOnly(404);
            assertThat(statuses(app, "status=200", 1)).containsOnly(429);
        }
    }

    /**
     * Sends a request for a long body, reads the response's head (the response is committed),
     * then resets the connection (SO_LINGER 0) mid-body, so that the application's next write
     * fails; waits until the request has left the filter.
     *
     * @return the status line the client got
     */
    static String hangUpMidBody(JettyApp app, String query) throws Exception {
        String id = java.util.UUID.randomUUID().toString();
        String statusLine;
        try (java.net.Socket socket = new java.net.Socket()) {
            // A small window: the server blocks on the body soon and sees the reset at its next write.
            socket.setReceiveBufferSize(4096);
            socket.connect(new java.net.InetSocketAddress("127.0.0.1", app.port()), 5_000);
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("GET /outcome?" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "X-Test-Id: " + id + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            java.io.InputStream in = socket.getInputStream();
            StringBuilder head = new StringBuilder();
            while (head.indexOf("\r\n\r\n") < 0) {
                int b = in.read();
                assertThat(b).as("the response's head").isNotNegative();
                head.append((char) b);
            }
            statusLine = head.substring(0, head.indexOf("\r\n"));
            socket.setSoLinger(true, 0);
        }
        assertThat(JettyApp.awaitFinished(id, Duration.ofSeconds(30))).as("the request left the filter").isTrue();
        return statusLine;
    }

    /**
     * The case: the application did its work, answered 200 and was writing the body when
     * the client reset the connection. The failed write is not the outcome: the committed 200
     * counts, it is not refunded as a 500.
     */
    @Test
    void aClientHangingUpMidBodyDoesNotTurnACommittedSuccessIntoARefund() throws Exception {
        try (JettyApp app = app("token-bucket", 2, "refund-when=status:5xx")) {
            assertThat(hangUpMidBody(app, "status=200&stream=1")).isEqualTo("HTTP/1.1 200 OK");
            assertThat(statuses(app, "status=200", 1)).containsOnly(200);
            assertThat(statuses(app, "status=200", 1)).as("the hung-up request counted").containsOnly(429);
        }
    }

    /** The same for count-when: a 401 whose body the client did not wait for still counts. */
    @Test
    void aClientHangingUpMidBodyDoesNotDropACountedFailure() throws Exception {
        try (JettyApp app = app("sliding-log", 2, "count-when=status:401")) {
            assertThat(hangUpMidBody(app, "status=401&stream=1")).isEqualTo("HTTP/1.1 401 Unauthorized");
            assertThat(statuses(app, "status=401", 1)).containsOnly(401);
            assertThat(statuses(app, "status=401", 1)).as("the hung-up 401 counted").containsOnly(429);
        }
    }

    /**
     * A count-when rule's units follow the response's status, and a 429 the filter answers is a
     * response too: a rejection (by this rule or another) counts for it only when 429 is among
     * its statuses. count-rejected with a count-when that gives 429 back could never keep what it
     * records, so it is refused at start-up.
     */
    @Test
    void aRejectionCountsForACountWhenRuleOnlyWhen429IsAmongItsStatuses() throws Exception {
        Map<String, String> contradictory = JettyApp.settings(valkey.url(), "ratelimit.rules", "logins",
                "ratelimit.rule.logins.match", "/outcome", "ratelimit.rule.logins.algorithm", "sliding-log",
                "ratelimit.rule.logins.limit", "3", "ratelimit.rule.logins.window", "1d",
                "ratelimit.rule.logins.count-when", "status:401", "ratelimit.rule.logins.count-rejected", "true");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> JettyApp.start(contradictory).close())
                .hasStackTraceContaining("ratelimit.rule.logins.count-rejected='true'");

        Map<String, String> settings = new java.util.HashMap<>(contradictory);
        settings.put("ratelimit.rule.logins.count-when", "status:401,429");
        settings.put("ratelimit.rules", "logins,burst");
        // Another rule, counted only for requests that carry X-Burst.
        settings.put("ratelimit.rule.burst.match", "/outcome");
        settings.put("ratelimit.rule.burst.algorithm", "fixed-window");
        settings.put("ratelimit.rule.burst.limit", "1");
        settings.put("ratelimit.rule.burst.window", "1d");
        settings.put("ratelimit.rule.burst.key", "header:X-Burst");
        try (JettyApp app = JettyApp.start(settings)) {
            assertThat(app.get("/outcome?status=200", "X-Burst", "b").statusCode()).as("a 200: given back").isEqualTo(200);
            assertThat(app.get("/outcome?status=200", "X-Burst", "b").statusCode()).as("the other rule's 429")
                    .isEqualTo(429);
            assertThat(statuses(app, "status=401", 3)).as("3 - the 429 counted").containsExactly(401, 401, 429);
        }
    }

    @Test
    void asyncResponsesAreSettledWhenTheyComplete() throws Exception {
        try (JettyApp app = app("sliding-log", 2, "count-when=status:401")) {
            assertThat(statuses(app, "async=1&status=200&sleep=50", 5)).containsOnly(200);
            assertThat(statuses(app, "async=1&status=401&sleep=50", 2)).containsOnly(401);
            assertThat(statuses(app, "async=1&status=200", 1)).containsOnly(429);
        }
    }

    /**
     * Where an async event carries only the request and response supplied with its listener (the
     * spec; Open Liberty), an async response is still settled by its own status, not as a 500.
     */
    @Test
    void asyncResponsesAreSettledByTheirStatusWhereEventsCarryOnlyWhatWasSupplied() throws Exception {
        try (JettyApp app = app("sliding-log", 2, "count-when=status:401")) {
            List<Integer> statuses = new ArrayList<>();
            for (String status : List.of("200", "200", "401", "401", "200")) {
                statuses.add(app.get("/outcome?async=1&sleep=50&status=" + status, "X-Test-Spec-Async", "1").statusCode());
            }
            assertThat(statuses).as("the 200s given back, the two 401s counted").containsExactly(200, 200, 401, 401, 429);
        }
    }
}
