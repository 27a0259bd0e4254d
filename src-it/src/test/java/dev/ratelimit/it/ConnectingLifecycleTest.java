package dev.ratelimit.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The thread that asks the sentinels again, when none answered at the start (README, When Valkey
 * is down: down at the start too), against the application's life cycle: it stops with the
 * application and asks nothing after; a hanging sentinel costs the start its timeouts only; and
 * once connected, the undeploy leaves no thread of the client behind.
 */
class ConnectingLifecycleTest {

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

    private static Map<String, String> settings(int sentinelPort, String rule) {
        return JettyApp.settings("redis://sentinel-managed",
                "ratelimit.valkey.sentinel.master", ValkeySentinels.MASTER,
                "ratelimit.valkey.sentinel.nodes", "127.0.0.1:" + sentinelPort,
                "ratelimit.valkey.connect-timeout", "200ms", "ratelimit.valkey.timeout", "300ms",
                "ratelimit.rules", rule, "ratelimit.rule." + rule + ".limit", "3",
                "ratelimit.rule." + rule + ".window", "1h", "ratelimit.rule." + rule + ".key", "global",
                "ratelimit.rule." + rule + ".on-failure", "closed", "ratelimit.deny-cache.enabled", "false");
    }

    @Test
    void theRetriesStopWithTheApplicationAndAskNothingAfter() throws Exception {
        try (Gate gate = new Gate(sentinelPort())) {
            try (JettyApp app = JettyApp.start(settings(gate.port(), "retrying"))) {
                assertThat(app.get("/hello").statusCode()).as("closed policy while no sentinel answers").isEqualTo(503);
                awaitAttempts(gate, 2); // the start's, then the first retry's after 1 s
            }
            awaitNoThread("ratelimit-connect");
            int atStop = gate.attempts();
            Thread.sleep(4_000); // the next retry would have come 2 s after the last
            assertThat(gate.attempts()).as("connections asked for after the stop").isEqualTo(atStop);
            assertThat(ManagementFactory.getPlatformMBeanServer().queryNames(
                    new ObjectName("dev.ratelimit:type=RateLimiter,rule=retrying,*"), null)).isEmpty();

            // Deployed again, the sentinel answering now: connected at the start, its MBean registered again.
            gate.open();
            try (JettyApp app = JettyApp.start(settings(gate.port(), "retrying"))) {
                List<Integer> statuses = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    statuses.add(app.get("/hello").statusCode());
                }
                assertThat(statuses).as("the redeployed application enforces on Valkey at once")
                        .containsExactly(200, 200, 200, 429);
                assertThat(ManagementFactory.getPlatformMBeanServer().queryNames(
                        new ObjectName("dev.ratelimit:type=RateLimiter,rule=retrying,*"), null)).isNotEmpty();
            }
        }
    }

    @Tag("wall-clock") // bounds a latency: keep such tests few, with generous bounds
    @Test
    void aHangingSentinelCostsTheStartItsTimeoutsAndRequestsGetThePolicyInBoundedTime() throws Exception {
        try (SilentServer sentinel = new SilentServer()) {
            long start = System.nanoTime();
            JettyApp app = JettyApp.start(settings(sentinel.port(), "hanging"));
            long startMillis = (System.nanoTime() - start) / 1_000_000;
            try {
                // One sentinel: one connect (200 ms) and one reply (300 ms) at most; slack for a busy box.
                assertThat(startMillis).as("ms the start took with a sentinel that never answers").isLessThan(3_000);
                ExecutorService callers = Executors.newFixedThreadPool(8);
                try {
                    List<Future<long[]>> calls = new ArrayList<>();
                    for (int i = 0; i < 32; i++) {
                        calls.add(callers.submit(() -> {
                            long t = System.nanoTime();
                            HttpResponse<String> response = app.get("/hello");
                            return new long[] {response.statusCode(), (System.nanoTime() - t) / 1_000_000};
                        }));
                    }
                    for (Future<long[]> call : calls) {
                        long[] outcome = call.get();
                        assertThat(outcome[0]).as("status while the sentinel hangs").isEqualTo(503);
                        assertThat(outcome[1]).as("ms a request took while the sentinel hangs").isLessThan(2_000);
                    }
                } finally {
                    callers.shutdownNow();
                }
            } finally {
                app.close();
            }
            awaitNoThread("ratelimit-connect");
        }
    }

    @Test
    void onceConnectedTheUndeployLeavesNoSentinelListener() throws Exception {
        try (Gate gate = new Gate(sentinelPort())) {
            try (JettyApp app = JettyApp.start(settings(gate.port(), "reached"))) {
                assertThat(app.get("/hello").statusCode()).isEqualTo(503);
                gate.open();
                long deadline = System.nanoTime() + 30_000_000_000L;
                int status = 503;
                while (status == 503 && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                    status = app.get("/hello").statusCode();
                }
                assertThat(status).as("decided on Valkey once the sentinel answers").isIn(200, 429);
                assertThat(threads("SentinelListener-[127.0.0.1:" + gate.port())).as("listening while deployed")
                        .isNotEmpty();
            }
            awaitNoThread("SentinelListener-[127.0.0.1:" + gate.port());
            awaitNoThread("ratelimit-connect");
        }
    }

    /**
     * The application stopped while a retry waits on a sentinel that is slow to answer: the
     * client that attempt builds after the stop is closed at once, and none of its threads may
     * outlive it (a sentinel listener told to stop before it ran would listen for ever).
     */
    @Test
    void aClientReachedAfterTheStopLeavesNoSentinelListener() throws Exception {
        try (Gate gate = new Gate(sentinelPort())) {
            Map<String, String> settings = settings(gate.port(), "late");
            settings.put("ratelimit.valkey.timeout", "3s");
            try (JettyApp app = JettyApp.start(settings)) {
                assertThat(app.get("/hello").statusCode()).isEqualTo(503);
                gate.openHolding(1_000);
                awaitAttempts(gate, 2); // the first retry, held by the gate
            }
            Thread.sleep(1_500); // the held attempt answered, its client built after the stop, and closed
            assertThat(gate.attempts()).as("connections asked for: a listener's among them shows the client was built")
                    .isGreaterThanOrEqualTo(3);
            awaitNoThread("ratelimit-connect");
            awaitNoThread("SentinelListener-[127.0.0.1:" + gate.port());
        }
    }

    /**
     * The rule's MBean while no sentinel answered yet: inspect says Valkey is not reached yet;
     * reset forgets this instance's state and says Valkey was not reset.
     */
    @Test
    void theMBeanOperationsSayValkeyIsNotReachedYet() throws Exception {
        try (Gate gate = new Gate(sentinelPort());
             JettyApp app = JettyApp.start(settings(gate.port(), "console"))) {
            assertThat(app.get("/hello").statusCode()).isEqualTo(503);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName("dev.ratelimit:type=RateLimiter,rule=console");
            String[] signature = {String.class.getName()};
            assertThatThrownBy(() -> server.invoke(name, "inspect", new Object[] {""}, signature))
                    .hasRootCauseInstanceOf(IllegalArgumentException.class).rootCause()
                    .hasMessageContaining("not reached yet");
            assertThat((String) server.invoke(name, "reset", new Object[] {""}, signature))
                    .startsWith("forgot key").contains("not in Valkey");
        }
    }

    private static int sentinelPort() {
        return Integer.parseInt(topology.sentinelNodes().get(0).split(":")[1]);
    }

    private static void awaitAttempts(Gate gate, int count) throws InterruptedException {
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (gate.attempts() < count && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(gate.attempts()).as("connections asked of the sentinel").isGreaterThanOrEqualTo(count);
    }

    /** Waits (a thread in an attempt finishes it: at most a connect and a reply) for no thread so named. */
    private static void awaitNoThread(String name) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!threads(name).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(threads(name)).as("threads named " + name + " after the stop").isEmpty();
    }

    private static List<String> threads(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.contains(name)).toList();
    }
}
