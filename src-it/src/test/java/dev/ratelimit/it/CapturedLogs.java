package dev.ratelimit.it;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What some of the filter's loggers publish while a test runs, at every level; {@link #close}
 * puts the loggers back as they were. The filter logs through {@code System.Logger}, which the
 * JDK routes to these {@code java.util.logging} loggers.
 */
final class CapturedLogs implements AutoCloseable {

    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    /** Held here: the log manager keeps loggers only weakly, and a collected one forgets its handler. */
    private final List<Logger> loggers = new ArrayList<>();
    private final List<Level> levels = new ArrayList<>();

    private CapturedLogs() {
    }

    /**
     * Starts capturing.
     *
     * @param names the loggers, e.g. {@code dev.ratelimit.servlet.PersistenceWarning}
     * @return the capture, to close after the test
     */
    static CapturedLogs of(String... names) {
        CapturedLogs logs = new CapturedLogs();
        for (String name : names) {
            Logger logger = Logger.getLogger(name);
            logs.loggers.add(logger);
            logs.levels.add(logger.getLevel());
            logger.setLevel(Level.ALL);
            logger.addHandler(logs.handler);
        }
        return logs;
    }

    /** Every record so far, in order. */
    List<LogRecord> records() {
        return records;
    }

    /**
     * The first record, waited for: the filter may log on a thread of its own.
     *
     * @param millis how long to wait at most
     * @return the record
     */
    LogRecord awaitFirst(long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        while (records.isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        assertThat(records).as("a log line within " + millis + " ms").isNotEmpty();
        return records.get(0);
    }

    /** The messages of one level, formatted. */
    List<String> messages(Level level) {
        return records.stream().filter(r -> r.getLevel() == level).map(CapturedLogs::message).toList();
    }

    /** A record's message with its parameters filled in. */
    static String message(LogRecord record) {
        return new SimpleFormatter().formatMessage(record);
    }

    @Override
    public void close() {
        for (int i = 0; i < loggers.size(); i++) {
            loggers.get(i).removeHandler(handler);
            loggers.get(i).setLevel(levels.get(i));
        }
    }
}
