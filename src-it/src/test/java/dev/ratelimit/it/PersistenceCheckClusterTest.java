package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The persistence check on a cluster whose primaries persist nothing (README, Quotas that
 * survive a restart: "If one persists nothing it logs one WARNING naming the servers and the
 * rules; if the user may not run CONFIG (an ACL without +config|get: NOPERM) or the server does
 * not answer, one INFO line says it is not known"), where the start asks once and never again:
 * <ul>
 *   <li>one primary down at the start: the two that answered persist nothing, and are named;</li>
 *   <li>the README's least-privilege ACL with {@code +config|get} (and what a cluster client
 *       needs, {@code +cluster|slots +cluster|shards}): the user may run CONFIG GET, so the
 *       answer is known and the three primaries are named.</li>
 * </ul>
 * And for contrast the same ACL on one Valkey, where the answer is known.
 */
class PersistenceCheckClusterTest {

    private static final String LOGGER = "dev.ratelimit.servlet.PersistenceWarning";
    private static final long WAIT_MILLIS = 30_000;
    /** The README's ACL, what a cluster client needs to learn the slots, and CONFIG GET. */
    private static final String ACL = SecurityTest.LIMITER_ACL + " +cluster|slots +cluster|shards +config|get";

    private CapturedLogs logs;

    @BeforeEach
    void listen() {
        logs = CapturedLogs.of(LOGGER);
    }

    @AfterEach
    void stopListening() {
        logs.close();
    }

    private static Map<String, String> settings(String url, String... more) {
        Map<String, String> settings = JettyApp.settings(url, "ratelimit.valkey.connect-timeout", "300ms",
                "ratelimit.valkey.timeout", "1s", "ratelimit.rules", "daily",
                "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "100",
                "ratelimit.rule.daily.window", "1d", "ratelimit.rule.daily.key", "header:X-Caller");
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    @Test
    void aClusterWithOnePrimaryDownAtStartStillWarnsOfThePrimariesThatPersistNothing() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3)) {
            ValkeyServer down = cluster.nodes().get(2);
            down.stop();
            try (JettyApp app = JettyApp.start(settings(cluster.seedUrl(), "ratelimit.valkey.cluster", "true"))) {
                LogRecord record = logs.awaitFirst(WAIT_MILLIS);
                String message = CapturedLogs.message(record);
                System.out.println("The check said: " + record.getLevel() + " " + message);
                assertThat(record.getLevel()).as(message).isEqualTo(Level.WARNING);
                assertThat(message).contains("[daily]")
                        .contains(address(cluster.nodes().get(0))).contains(address(cluster.nodes().get(1)));
                Thread.sleep(500);
                assertThat(logs.records()).as("one line").hasSize(1);
            }
        }
    }

    @Test
    void aClusterUserThatMayRunConfigGetGetsTheWarning() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3)) {
            for (ValkeyServer node : cluster.nodes()) {
                try (Jedis admin = node.connect()) {
                    admin.aclSetUser("limiter", (">s3cret-pw " + ACL).split(" "));
                }
            }
            String url = cluster.seedUrl().replace("redis://", "redis://limiter:s3cret-pw@");
            try (JettyApp app = JettyApp.start(settings(url, "ratelimit.valkey.cluster", "true"))) {
                LogRecord record = logs.awaitFirst(WAIT_MILLIS);
                String message = CapturedLogs.message(record);
                System.out.println("The check said: " + record.getLevel() + " " + message);
                assertThat(app.get("/", "X-Caller", "a").headers().firstValue("RateLimit"))
                        .as("the limiter itself works under this ACL").isPresent();
                assertThat(record.getLevel()).as(message).isEqualTo(Level.WARNING);
                for (ValkeyServer node : cluster.nodes()) {
                    assertThat(message).contains(address(node));
                }
            }
        }
    }

    @Test
    void oneValkeyUserThatMayRunConfigGetGetsTheWarning() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            try (Jedis admin = valkey.connect()) {
                admin.aclSetUser("limiter", (">s3cret-pw " + ACL).split(" "));
            }
            String url = valkey.url().replace("redis://", "redis://limiter:s3cret-pw@");
            try (JettyApp app = JettyApp.start(settings(url))) {
                LogRecord record = logs.awaitFirst(WAIT_MILLIS);
                assertThat(record.getLevel()).as(CapturedLogs.message(record)).isEqualTo(Level.WARNING);
                assertThat(CapturedLogs.message(record)).contains("[daily]");
                assertThat(app.get("/", "X-Caller", "a").headers().firstValue("RateLimit")).isPresent();
            }
        }
    }

    private static String address(ValkeyServer node) {
        return node.url().substring("redis://".length());
    }
}
