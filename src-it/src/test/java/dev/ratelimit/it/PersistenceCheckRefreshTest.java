package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The persistence check (README, Quotas that survive a restart) mixed with refreshes and the
 * start's faults: a cluster not reached at the start is asked once connected, for the rules of
 * the latest reading; a rule lengthened to an hour, or a plan given a long window, is asked for;
 * a rule is named at most once however many refreshes rename, shorten and lengthen it, and the
 * checks do not pile up threads; the kill switch asks nothing; a stop does not wait for a check
 * that is out.
 */
class PersistenceCheckRefreshTest {

    private static final String LOGGER = "dev.ratelimit.servlet.PersistenceWarning";
    private static final String REFRESH_LOGGER = "dev.ratelimit.servlet.SettingsRefresh";
    private static final String THREAD = "ratelimit-persistence-check";
    /** Generous for a busy machine. */
    private static final long WAIT_MILLIS = 30_000;

    private CapturedLogs logs;
    private CapturedLogs refreshes;

    @BeforeEach
    void listen() {
        logs = CapturedLogs.of(LOGGER);
        refreshes = CapturedLogs.of(REFRESH_LOGGER);
    }

    @AfterEach
    void stopListening() {
        logs.close();
        refreshes.close();
    }

    /**
     * A cluster whose seed does not answer at the start; meanwhile a refresh renames the day rule
     * and gives another rule's plan a window of a week. Once the seed answers, one WARNING names
     * the rules of that reading, not the renamed one.
     */
    @Test
    void aClusterNotReachedAtStartIsAskedOnceConnectedForTheLatestReading() throws Exception {
        try (ValkeyCluster cluster = ValkeyCluster.start(3)) {
            int seed = Integer.parseInt(cluster.seedUrl().substring(cluster.seedUrl().lastIndexOf(':') + 1));
            try (Gate gate = new Gate(seed)) {
                EditableConfigSource source = new EditableConfigSource("dynamic", 100);
                source.values.putAll(JettyApp.settings("redis://127.0.0.1:" + gate.port(),
                        "ratelimit.valkey.cluster", "true", "ratelimit.valkey.connect-timeout", "200ms",
                        "ratelimit.valkey.timeout", "500ms", "ratelimit.refresh", "100ms",
                        "ratelimit.rules", "daily,api",
                        "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "100",
                        "ratelimit.rule.daily.window", "1d",
                        "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m",
                        "ratelimit.rule.api.key", "header:X-Caller", "ratelimit.rule.api.plan", "header:X-Plan",
                        "ratelimit.rule.api.plan.pro.limit", "50"));
                try (JettyApp app = JettyApp.start(source)) {
                    assertThat(app.get("/").statusCode()).as("on-failure=open while not connected").isEqualTo(200);
                    // The new rule's settings first, the rule list last: no reading sees half of it.
                    source.values.put("ratelimit.rule.renamed.algorithm", "fixed-window");
                    source.values.put("ratelimit.rule.renamed.limit", "100");
                    source.values.put("ratelimit.rule.renamed.window", "1d");
                    source.values.put("ratelimit.rule.api.plan.pro.window", "7d");
                    source.values.put("ratelimit.rules", "renamed,api");
                    awaitRefresh("[renamed, api]");
                    assertThat(logs.records()).as("nothing asked before the cluster answers").isEmpty();

                    gate.open();
                    LogRecord record = logs.awaitFirst(WAIT_MILLIS);
                    assertThat(record.getLevel()).as(CapturedLogs.message(record)).isEqualTo(Level.WARNING);
                    assertThat(CapturedLogs.message(record)).contains("renamed").contains("api").doesNotContain("daily");
                    Thread.sleep(1_000);
                    assertThat(logs.records()).as("one line").hasSize(1);
                }
            }
        }
    }

    /**
     * On one Valkey that persists nothing: a rule lengthened from 30 minutes to an hour, then a
     * plan given a window of two hours, are each named in a line of their own; renaming a rule
     * names the new name; renaming it back, shortening and lengthening a named rule again, and
     * twenty more refreshes that add rules of a day one by one name nothing twice, and at no
     * moment is more than one check's thread alive on a Valkey that answers.
     */
    @Test
    void refreshesNameEachLongRuleOnceAndPileUpNoThreads() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            EditableConfigSource source = new EditableConfigSource("dynamic", 100);
            source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.refresh", "100ms",
                    "ratelimit.rules", "daily,grows,api",
                    "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "100",
                    "ratelimit.rule.daily.window", "1d",
                    "ratelimit.rule.grows.limit", "10", "ratelimit.rule.grows.window", "30m",
                    "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m",
                    "ratelimit.rule.api.key", "header:X-Caller", "ratelimit.rule.api.plan", "header:X-Plan",
                    "ratelimit.rule.api.plan.pro.limit", "50"));
            AtomicInteger mostThreads = new AtomicInteger();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    mostThreads.accumulateAndGet(checkThreads(), Math::max);
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            sampler.setDaemon(true);
            sampler.start();
            try (JettyApp app = JettyApp.start(source)) {
                awaitLines(1);
                assertThat(message(0)).contains("[daily]");

                source.values.put("ratelimit.rule.grows.window", "1h");
                awaitLines(2);
                assertThat(message(1)).as("a rule lengthened to an hour").contains("[grows]");

                source.values.put("ratelimit.rule.api.plan.pro.window", "2h");
                awaitLines(3);
                assertThat(message(2)).as("a plan given a long window").contains("[api]");

                putRule(source, "renamed", "1d");
                source.values.put("ratelimit.rules", "renamed,grows,api");
                awaitLines(4);
                assertThat(message(3)).as("a renamed rule is a new name").contains("[renamed]");

                // Back to the old name, grows shortened then lengthened: nothing named twice.
                source.values.put("ratelimit.rules", "daily,grows,api");
                awaitRefresh("[daily, grows, api]");
                int applied = refreshCount();
                source.values.put("ratelimit.rule.grows.window", "1m");
                awaitRefreshCount(applied + 1);
                applied = refreshCount();
                source.values.put("ratelimit.rule.grows.window", "1h");
                awaitRefreshCount(applied + 1);

                List<String> names = new ArrayList<>(List.of("daily", "grows", "api"));
                for (int i = 0; i < 20; i++) {
                    String name = "r" + i;
                    putRule(source, name, "1d");
                    names.add(name);
                    source.values.put("ratelimit.rules", String.join(",", names));
                    awaitRefresh(names.toString().replace("[", "").replace("]", ""));
                }
                long deadline = System.currentTimeMillis() + WAIT_MILLIS;
                while (named("r19") == 0 && System.currentTimeMillis() < deadline) {
                    Thread.sleep(50);
                }
                Thread.sleep(500);
                for (String name : List.of("daily", "grows", "api", "renamed")) {
                    assertThat(named(name)).as("lines naming %s", name).isEqualTo(1);
                }
                for (int i = 0; i < 20; i++) {
                    assertThat(named("r" + i)).as("lines naming r%d", i).isEqualTo(1);
                }
                assertThat(logs.records()).allMatch(r -> r.getLevel() == Level.WARNING);
                assertThat(app.get("/").statusCode()).isEqualTo(200);
            } finally {
                sampler.interrupt();
            }
            assertThat(mostThreads.get()).as("check threads alive at once").isLessThanOrEqualTo(1);
            assertThat(checkThreads()).as("check threads left").isZero();
        }
    }

    /**
     * The kill switch reads no other setting: a day rule asks nothing, and a refresh that would
     * turn the limits on is not read either (README: ratelimit.enabled cannot be changed by a
     * refresh).
     */
    @Test
    void theKillSwitchAsksNothingAndARefreshCannotTurnItOn() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            EditableConfigSource source = new EditableConfigSource("dynamic", 100);
            source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.enabled", "false",
                    "ratelimit.refresh", "100ms", "ratelimit.rules", "daily",
                    "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "1",
                    "ratelimit.rule.daily.window", "1d", "ratelimit.rule.daily.key", "global"));
            try (JettyApp app = JettyApp.start(source)) {
                assertThat(app.get("/").statusCode()).isEqualTo(200);
                source.values.put("ratelimit.enabled", "true");
                assertThat(app.refreshNow()).as("a refresh running while the limits are off").isFalse();
                for (int i = 0; i < 3; i++) {
                    assertThat(app.get("/").statusCode()).as("still off").isEqualTo(200);
                }
                assertThat(valkey.commandCalls("config|get")).isZero();
                assertThat(logs.records()).isEmpty();
            }
        }
    }

    /**
     * A stop while the check waits on a server that never answers (a 6 s timeout): the stop does
     * not wait for it, and its thread is gone once the question times out.
     */
    @Test
    void aStopWhileTheCheckIsOutNeitherWaitsForItNorLeavesItsThread() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            JettyApp app = JettyApp.start(JettyApp.settings("redis://127.0.0.1:" + silent.port(),
                    "ratelimit.valkey.timeout", "6s", "ratelimit.valkey.connect-timeout", "6s",
                    "ratelimit.rules", "daily", "ratelimit.rule.daily.algorithm", "fixed-window",
                    "ratelimit.rule.daily.limit", "100", "ratelimit.rule.daily.window", "1d"));
            long deadline = System.currentTimeMillis() + 5_000;
            while (checkThreads() == 0 && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            assertThat(checkThreads()).as("the check is out").isEqualTo(1);
            long before = System.nanoTime();
            app.close();
            long stopMillis = (System.nanoTime() - before) / 1_000_000;
            assertThat(stopMillis).as("the stop did not wait for the 6 s question").isLessThan(4_000);
            deadline = System.currentTimeMillis() + 30_000;
            while (checkThreads() > 0 && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            assertThat(checkThreads()).as("the check's thread after the stop").isZero();
            System.out.println("Lines of the check after the stop: " + logs.records().stream()
                    .map(r -> r.getLevel() + " " + CapturedLogs.message(r)).toList());
        }
    }

    private static void putRule(EditableConfigSource source, String name, String window) {
        source.values.put("ratelimit.rule." + name + ".algorithm", "fixed-window");
        source.values.put("ratelimit.rule." + name + ".limit", "100");
        source.values.put("ratelimit.rule." + name + ".window", window);
    }

    private static int checkThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream().filter(t -> THREAD.equals(t.getName()) && t.isAlive())
                .count();
    }

    private String message(int index) {
        return CapturedLogs.message(logs.records().get(index));
    }

    /** How many lines name the rule, as a whole word in the list. */
    private long named(String rule) {
        return logs.records().stream().map(CapturedLogs::message)
                .filter(m -> m.matches("(?s).*rules \\[([^\\]]*, )?" + rule + "(, [^\\]]*)?\\].*")).count();
    }

    private void awaitLines(int count) throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (logs.records().size() < count && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        assertThat(logs.records()).as("lines of the check").hasSize(count);
    }

    private int refreshCount() {
        return (int) refreshes.records().stream().filter(r -> CapturedLogs.message(r).startsWith("Rate-limit settings refreshed"))
                .count();
    }

    private void awaitRefreshCount(int count) throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (refreshCount() < count && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        assertThat(refreshCount()).as("refreshes applied").isGreaterThanOrEqualTo(count);
    }

    /** Waits for the refresh that applies these rules (listed as the refresh logs them). */
    private void awaitRefresh(String rules) throws InterruptedException {
        String wanted = rules.startsWith("[") ? rules : "[" + rules + "]";
        long deadline = System.nanoTime() + Duration.ofMillis(WAIT_MILLIS).toNanos();
        while (refreshes.records().stream().noneMatch(r -> CapturedLogs.message(r).contains("rules " + wanted + " apply"))
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(refreshes.records().stream().map(CapturedLogs::message).toList())
                .as("a refresh applying %s", wanted).anyMatch(m -> m.contains("rules " + wanted + " apply"));
    }
}
