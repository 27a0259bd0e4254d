package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * At start-up the filter asks, once, whether the Valkey behind rules of an hour or longer
 * persists: a Valkey without AOF or snapshots gets one warning naming the rules, one with AOF
 * none, and a user that may not run {@code CONFIG} one INFO line. Each on a {@code valkey-server}
 * of its own, whose settings the test chooses.
 */
class PersistenceWarningTest {

    private static final String LOGGER = "dev.ratelimit.servlet.PersistenceWarning";
    /** Generous for a busy machine: the check runs on its own thread after the start. */
    private static final long WAIT_MILLIS = 20_000;

    private CapturedLogs logs;
    private List<LogRecord> records;

    @BeforeEach
    void listen() {
        logs = CapturedLogs.of(LOGGER);
        records = logs.records();
    }

    @AfterEach
    void stopListening() {
        logs.close();
    }

    private static Map<String, String> settings(String url) {
        return JettyApp.settings(url, "ratelimit.rules", "daily,burst",
                "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "100",
                "ratelimit.rule.daily.window", "calendar-day", "ratelimit.rule.daily.time-zone", "Europe/Berlin",
                "ratelimit.rule.burst.algorithm", "token-bucket", "ratelimit.rule.burst.limit", "10",
                "ratelimit.rule.burst.window", "1s");
    }

    /** The check's one line, waited for. */
    private LogRecord awaitRecord() throws InterruptedException {
        return logs.awaitFirst(WAIT_MILLIS);
    }

    private static String message(LogRecord record) {
        return CapturedLogs.message(record);
    }

    @Test
    void aValkeyThatPersistsNothingGetsOneWarningNamingTheLongRules() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of()); JettyApp app = JettyApp.start(settings(valkey.url()))) {
            LogRecord record = awaitRecord();
            assertThat(record.getLevel()).isEqualTo(Level.WARNING);
            assertThat(message(record)).contains("[daily]").contains("appendonly").doesNotContain("burst");
            Thread.sleep(200);
            assertThat(records).as("one line").hasSize(1);
        }
    }

    @Test
    void aValkeyWithAnAppendOnlyFileGetsNoWarning() throws Exception {
        Path dir = Files.createTempDirectory("valkey-aof");
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of("--appendonly", "yes", "--dir", dir.toString()));
             JettyApp app = JettyApp.start(settings(valkey.url()))) {
            LogRecord record = awaitRecord();
            assertThat(record.getLevel().intValue()).as(message(record)).isLessThan(Level.INFO.intValue());
            assertThat(records).noneMatch(r -> r.getLevel().intValue() >= Level.INFO.intValue());
        }
    }

    @Test
    void aUserThatMayNotAskGetsOneInfoLine() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            try (Jedis admin = valkey.connect()) {
                admin.aclSetUser("limiter", "on", ">secret", "~*", "+@all", "-config");
            }
            String url = valkey.url().replace("redis://", "redis://limiter:secret@");
            try (JettyApp app = JettyApp.start(settings(url))) {
                LogRecord record = awaitRecord();
                assertThat(record.getLevel()).isEqualTo(Level.INFO);
                assertThat(message(record)).contains("[daily]").contains("is not known").containsIgnoringCase("noperm");
            }
        }
    }

    /**
     * On a cluster every primary is asked: three that persist nothing are named, and one that
     * turns snapshots on drops out of the list.
     */
    @Test
    void onAClusterEveryPrimaryIsAsked() {
        try (ValkeyCluster cluster = ValkeyCluster.start(3);
             dev.ratelimit.valkey.ValkeyRateLimiter limiter = dev.ratelimit.valkey.ValkeyRateLimiter.builder()
                     .settings(dev.ratelimit.valkey.ValkeySettings.of(cluster.seedUrl()).withCluster(true)).build()) {
            dev.ratelimit.valkey.Persistence none = limiter.inspector().persistence();
            assertThat(none.known()).as(String.valueOf(none.unknown())).isTrue();
            assertThat(none.volatileServers()).hasSize(3);
            try (Jedis node = cluster.nodes().get(0).connect()) {
                // Snapshots after an hour with a change: it persists, and writes no file during the test.
                node.configSet("save", "3600 1");
            }
            dev.ratelimit.valkey.Persistence one = limiter.inspector().persistence();
            assertThat(one.volatileServers()).hasSize(2)
                    .doesNotContain(cluster.nodes().get(0).url().substring("redis://".length()));
        }
    }

    /**
     * Behind Sentinel the primary the sentinels name is asked: it persists nothing until it turns
     * snapshots on (the replica's settings are not the question).
     */
    @Test
    void behindSentinelThePrimaryIsAsked() {
        try (ValkeySentinels topology = ValkeySentinels.start();
             dev.ratelimit.valkey.ValkeyRateLimiter limiter = dev.ratelimit.valkey.ValkeyRateLimiter.builder()
                     .settings(dev.ratelimit.valkey.ValkeySettings.of("redis://ignored:1")
                             .withSentinel(ValkeySentinels.MASTER, topology.sentinelNodes())).build()) {
            assertThat(limiter.inspector().persistence().volatileServers()).hasSize(1);
            try (Jedis primary = topology.primary().connect()) {
                primary.configSet("save", "3600 1");
            }
            dev.ratelimit.valkey.Persistence after = limiter.inspector().persistence();
            assertThat(after.persists()).as("%s", after).isTrue();
        }
    }

    /**
     * A refresh that adds a rule of an hour or more asks for it, naming only the new rule: the
     * rules asked about before are not named again, and a refresh that adds none asks nothing.
     */
    @Test
    void aRefreshThatAddsALongRuleAsksForItAlone() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            EditableConfigSource source = new EditableConfigSource("dynamic", 100);
            source.values.putAll(settings(valkey.url()));
            source.values.put("ratelimit.refresh", "100ms");
            try (JettyApp app = JettyApp.start(source)) {
                assertThat(message(awaitRecord())).contains("[daily]");
                assertThat(valkey.commandCalls("config|get")).as("asked once at the start").isEqualTo(1);

                source.values.put("ratelimit.rule.burst.limit", "11");
                Thread.sleep(500);
                assertThat(valkey.commandCalls("config|get")).as("a refresh with no new long rule").isEqualTo(1);

                source.values.put("ratelimit.rules", "daily,burst,monthly");
                source.values.put("ratelimit.rule.monthly.algorithm", "fixed-window");
                source.values.put("ratelimit.rule.monthly.limit", "1000");
                source.values.put("ratelimit.rule.monthly.window", "calendar-month");
                long deadline = System.currentTimeMillis() + WAIT_MILLIS;
                while (records.size() < 2 && System.currentTimeMillis() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(records).as("a second line").hasSize(2);
                assertThat(records.get(1).getLevel()).isEqualTo(Level.WARNING);
                assertThat(message(records.get(1))).contains("[monthly]").doesNotContain("daily");
                assertThat(app.get("/").statusCode()).isEqualTo(200);
            }
        }
    }

    /** No rule of an hour or more: nothing is asked, nothing said. */
    @Test
    void shortWindowsAskNothing() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of());
             JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "burst",
                     "ratelimit.rule.burst.limit", "10", "ratelimit.rule.burst.window", "59m"))) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            assertThat(valkey.commandCalls("config|get")).isZero();
            assertThat(records).isEmpty();
        }
    }
}
