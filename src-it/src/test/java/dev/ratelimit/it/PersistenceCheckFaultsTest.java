package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up persistence check when Valkey is not there to answer: down at start, or hung (a
 * port that accepts and never replies). The start neither fails nor waits for it, requests are
 * decided by the rule's {@code on-failure}, and the check says once, at INFO, that it does not
 * know.
 */
class PersistenceCheckFaultsTest {

    private static final String LOGGER = "dev.ratelimit.servlet.PersistenceWarning";
    /** Generous for a busy machine: the check runs on its own thread after the start. */
    private static final long WAIT_MILLIS = 30_000;

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

    private static Map<String, String> settings(String url, String timeout) {
        return JettyApp.settings(url, "ratelimit.rules", "monthly",
                "ratelimit.valkey.timeout", timeout,
                "ratelimit.rule.monthly.algorithm", "fixed-window", "ratelimit.rule.monthly.limit", "10000",
                "ratelimit.rule.monthly.window", "calendar-month", "ratelimit.rule.monthly.time-zone", "Europe/Berlin");
    }

    private void awaitRecord() throws InterruptedException {
        logs.awaitFirst(WAIT_MILLIS);
    }

    private static String message(LogRecord record) {
        return CapturedLogs.message(record);
    }

    /** Valkey down at start: the app starts, answers by on-failure (open), and one INFO line says it is not known. */
    @Test
    void aValkeyDownAtStartGetsOneInfoLineAndTheAppStarts() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            valkey.stop();
            try (JettyApp app = JettyApp.start(settings(valkey.url(), "500ms"))) {
                assertThat(app.get("/").statusCode()).as("on-failure=open").isEqualTo(200);
                awaitRecord();
                Thread.sleep(200);
                assertThat(records).as("one line").hasSize(1);
                assertThat(records.get(0).getLevel()).isEqualTo(Level.INFO);
                assertThat(message(records.get(0))).contains("[monthly]").contains("is not known");
            }
        }
    }

    /**
     * A hung server (accepts, never answers) and a timeout of 12 s: the start returns before
     * the question could have failed, so it did not wait for it; the INFO line follows.
     */
    @Test
    void aHungServerNeitherDelaysTheStartNorGoesUnsaid() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            long before = System.nanoTime();
            try (JettyApp app = JettyApp.start(settings("redis://127.0.0.1:" + silent.port(), "12s"))) {
                long startMillis = (System.nanoTime() - before) / 1_000_000;
                assertThat(startMillis).as("the start did not wait for the 12 s question").isLessThan(9_000);
                assertThat(records).as("nothing said yet: the question is still out").isEmpty();
                long deadline = System.currentTimeMillis() + 60_000;
                while (records.isEmpty() && System.currentTimeMillis() < deadline) {
                    Thread.sleep(50);
                }
                assertThat(records).hasSize(1);
                assertThat(records.get(0).getLevel()).isEqualTo(Level.INFO);
                assertThat(message(records.get(0))).contains("[monthly]").contains("is not known");
            }
        }
    }
}
