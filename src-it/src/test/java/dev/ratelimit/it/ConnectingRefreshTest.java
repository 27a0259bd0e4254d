package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refresh of the settings while no sentinel has answered yet (README, When Valkey is down:
 * down at the start too): the refreshed policy answers at once, and the refreshed limit is the
 * one enforced on Valkey once a sentinel answers.
 */
@ExtendWith(ValkeySentinelsExtension.class)
class ConnectingRefreshTest {

    private static final long REFRESH_MILLIS = 200;

    private final ValkeySentinels topology;

    ConnectingRefreshTest(ValkeySentinels topology) {
        this.topology = topology;
    }

    @Test
    void aRefreshMeanwhileAppliesItsPolicyNowAndItsLimitOnceConnected() throws Exception {
        int sentinel = Integer.parseInt(topology.sentinelNodes().get(0).split(":")[1]);
        try (Gate gate = new Gate(sentinel)) {
            EditableConfigSource source = new EditableConfigSource("dynamic", 100);
            source.values.putAll(JettyApp.settings("redis://sentinel-managed",
                    "ratelimit.valkey.sentinel.master", ValkeySentinels.MASTER,
                    "ratelimit.valkey.sentinel.nodes", "127.0.0.1:" + gate.port(),
                    "ratelimit.valkey.connect-timeout", "200ms", "ratelimit.valkey.timeout", "300ms",
                    "ratelimit.rules", "refreshed", "ratelimit.rule.refreshed.limit", "5",
                    "ratelimit.rule.refreshed.window", "1h", "ratelimit.rule.refreshed.key", "global",
                    "ratelimit.rule.refreshed.on-failure", "closed", "ratelimit.deny-cache.enabled", "false",
                    "ratelimit.refresh", REFRESH_MILLIS + "ms"));
            try (JettyApp app = JettyApp.start(source)) {
                assertThat(app.get("/hello").statusCode()).as("closed policy while no sentinel answers").isEqualTo(503);

                // The policy last: once it answers, the limit beside it was read too.
                source.values.put("ratelimit.rule.refreshed.limit", "2");
                source.values.put("ratelimit.rule.refreshed.on-failure", "open");
                awaitStatus(app, 200, "the refreshed open policy, still not connected");

                gate.open();
                awaitAttempts(gate);
                // Counted on Valkey once connected (within 30 s on a busy machine): over the
                // refreshed limit of 2 within a few calls of the first one Valkey decides.
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                HttpResponse<String> first = app.get("/hello");
                while (first.headers().firstValue("RateLimit").isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                    first = app.get("/hello");
                }
                assertThat(first.headers().firstValue("RateLimit")).as("a request decided by Valkey").isPresent();
                List<Integer> statuses = new ArrayList<>(List.of(first.statusCode()));
                for (int i = 0; i < 2; i++) {
                    statuses.add(app.get("/hello").statusCode());
                }
                assertThat(statuses).as("the refreshed limit of 2 on Valkey").contains(429);
            }
        }
    }

    /** Waits for a refresh to apply (30 s at most, for a busy machine): until a request gets the status. */
    private static void awaitStatus(JettyApp app, int status, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        int got;
        while ((got = app.get("/hello").statusCode()) != status && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(got).as(what).isEqualTo(status);
    }

    /** Waits until the retries asked the opened gate once more: the sentinel is reached then. */
    private static void awaitAttempts(Gate gate) throws InterruptedException {
        int before = gate.attempts();
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (gate.attempts() <= before && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(gate.attempts()).as("connections asked of the opened gate").isGreaterThan(before);
        Thread.sleep(500);
    }
}
