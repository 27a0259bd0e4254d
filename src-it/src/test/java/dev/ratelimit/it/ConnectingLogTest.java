package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the start that reached no sentinel says, and how often it asks again (README, When Valkey
 * is down: down at the start too): one ERROR naming the sentinels, attempts after 1 s then twice
 * as long each time, nothing logged per failed attempt, one INFO when a sentinel answers, and the
 * persistence check of the long-window rule once connected.
 */
@ExtendWith(ValkeySentinelsExtension.class)
class ConnectingLogTest {

    private final ValkeySentinels topology;

    ConnectingLogTest(ValkeySentinels topology) {
        this.topology = topology;
    }

    private CapturedLogs logs;

    @BeforeEach
    void listen() {
        logs = CapturedLogs.of("dev.ratelimit.servlet.ConnectingStore", "dev.ratelimit.servlet.PersistenceWarning");
    }

    @AfterEach
    void stopListening() {
        logs.close();
    }

    @Test
    void oneErrorAttemptsThatBackOffOneInfoOnceReachedThenThePersistenceCheck() throws Exception {
        int sentinel = Integer.parseInt(topology.sentinelNodes().get(0).split(":")[1]);
        try (Gate gate = new Gate(sentinel);
             JettyApp app = JettyApp.start(JettyApp.settings("redis://sentinel-managed",
                     "ratelimit.valkey.sentinel.master", ValkeySentinels.MASTER,
                     "ratelimit.valkey.sentinel.nodes", "127.0.0.1:" + gate.port(),
                     "ratelimit.valkey.connect-timeout", "200ms", "ratelimit.valkey.timeout", "300ms",
                     "ratelimit.rules", "logged", "ratelimit.rule.logged.limit", "3",
                     "ratelimit.rule.logged.window", "1d", "ratelimit.rule.logged.key", "global",
                     "ratelimit.rule.logged.on-failure", "closed"))) {
            Thread.sleep(7_500);
            // Asked at 0, 1, 3 and 7 s: a delay on a busy box makes fewer, never more; a fixed 1 s would make 8.
            assertThat(gate.attempts()).as("connections asked of the sentinel in 7.5 s").isBetween(3, 4);
            assertThat(messages(Level.SEVERE)).as("ERRORs while no sentinel answers").hasSize(1);
            assertThat(messages(Level.SEVERE).get(0)).contains("127.0.0.1:" + gate.port()).contains("on-failure");
            assertThat(messages(Level.INFO)).as("INFOs while no sentinel answers").isEmpty();

            gate.open();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (messages(Level.WARNING).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(messages(Level.INFO)).as("INFOs once a sentinel answers").hasSize(1);
            assertThat(messages(Level.INFO).get(0)).startsWith("Rate limiting reached");
            assertThat(messages(Level.WARNING)).as("the persistence check of the 1d rule, once connected")
                    .singleElement().asString().contains("logged");
            assertThat(messages(Level.SEVERE)).as("ERRORs in all").hasSize(1);
        }
    }

    private List<String> messages(Level level) {
        return logs.messages(level);
    }
}
