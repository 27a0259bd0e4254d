package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter started while no sentinel answers (README, When Valkey is down: down at the start
 * too): it starts, each rule's policy answers, and once a sentinel answers the limits are
 * enforced on the primary it names, with no restart. The sentinel is reached through a gate that
 * drops every connection until opened ({@link Gate}).
 */
@ExtendWith(ValkeySentinelsExtension.class)
class SentinelsDownAtStartTest {

    private final ValkeySentinels topology;

    SentinelsDownAtStartTest(ValkeySentinels topology) {
        this.topology = topology;
    }

    @Test
    void theFilterStartsAnswersByPolicyThenEnforcesOnceASentinelAnswers() throws Exception {
        int sentinel = Integer.parseInt(topology.sentinelNodes().get(0).split(":")[1]);
        try (Gate gate = new Gate(sentinel)) {
            Map<String, String> settings = JettyApp.settings("redis://sentinel-managed",
                    "ratelimit.valkey.sentinel.master", ValkeySentinels.MASTER,
                    "ratelimit.valkey.sentinel.nodes", "127.0.0.1:" + gate.port(),
                    "ratelimit.valkey.connect-timeout", "300ms",
                    "ratelimit.rules", "api", "ratelimit.rule.api.limit", "3", "ratelimit.rule.api.window", "1h",
                    "ratelimit.rule.api.key", "global", "ratelimit.rule.api.on-failure", "closed",
                    "ratelimit.deny-cache.enabled", "false");
            try (JettyApp app = JettyApp.start(settings)) {
                HttpResponse<String> refused = app.get("/hello");
                assertThat(refused.statusCode()).as("closed policy while no sentinel answers: " + refused.body())
                        .isEqualTo(503);
                assertThat(refused.body()).contains("\"rule\":\"api\"");

                gate.open();
                long deadline = System.nanoTime() + 90_000_000_000L;
                int status = refused.statusCode();
                while (status == 503 && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                    status = app.get("/hello").statusCode();
                }
                assertThat(status).as("a call decided on Valkey once the sentinel answers").isIn(200, 429);
                List<Integer> statuses = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    statuses.add(app.get("/hello").statusCode());
                }
                assertThat(statuses).as("the limit of 3, of which the first call after the gate opened took one")
                        .containsExactly(200, 200, 429, 429);
            }
        }
    }
}
