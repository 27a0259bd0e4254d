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

    @Test
    void asyncResponsesAreSettledWhenTheyComplete() throws Exception {
        try (JettyApp app = app("sliding-log", 2, "count-when=status:401")) {
            assertThat(statuses(app, "async=1&status=200&sleep=50", 5)).containsOnly(200);
            assertThat(statuses(app, "async=1&status=401&sleep=50", 2)).containsOnly(401);
            assertThat(statuses(app, "async=1&status=200", 1)).containsOnly(429);
        }
    }
}
