package dev.ratelimit.servlet;

import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.config.SettingsSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * {@code ratelimit.refresh}: reads the settings again every so often (MicroProfile Config
 * sources may change while the application runs) and hands a valid new reading to the filter,
 * which applies its rules for the requests that follow. A reading with any problem is refused
 * whole and the running settings kept; it is logged once, until the settings change again.
 * Settings used only at start-up (the connection to Valkey, the key prefix, the clock...) are
 * not applied: a reading that changes them is applied for its rules and logged once. A warning
 * of a reading (a rule configured but not listed...) is logged when the reading before did not
 * give it, not at every reading.
 */
final class SettingsRefresh implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(SettingsRefresh.class.getName());

    private final SettingsSource source;
    private final Consumer<FilterSettings> apply;
    private final ScheduledExecutorService timer;
    private final Map<String, Object> startUp;
    private FilterSettings current;
    /** The last problem or restart notice logged, so that an unchanged reading is not logged again. */
    private String lastLogged = "";
    /** The warnings of the last reading, logged already. */
    private List<String> lastWarnings;

    private SettingsRefresh(SettingsSource source, FilterSettings started, List<String> warnings,
                            Consumer<FilterSettings> apply) {
        this.source = source;
        this.current = started;
        this.lastWarnings = List.copyOf(warnings);
        this.startUp = started.startUpOnly();
        this.apply = apply;
        this.timer = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "ratelimit-settings-refresh");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Reads the settings again every {@code started.refresh()}.
     *
     * @param source   where the settings come from
     * @param started  the settings the filter started with; their refresh must be set
     * @param warnings the warnings of that reading, logged already
     * @param apply    told of each valid reading that differs from the running one
     * @return the running refresh; close it to stop
     */
    static SettingsRefresh start(SettingsSource source, FilterSettings started, List<String> warnings,
                                 Consumer<FilterSettings> apply) {
        SettingsRefresh refresh = new SettingsRefresh(source, started, warnings, apply);
        long millis = started.refresh().orElseThrow().toMillis();
        refresh.timer.scheduleWithFixedDelay(refresh::readAgain, millis, millis, TimeUnit.MILLISECONDS);
        return refresh;
    }

    /** The longest {@link #readNow} waits for its reading (a source that hangs, say). */
    private static final long READ_NOW_SECONDS = 60;

    /**
     * Reads the settings again now, on the refresh's own thread (so never beside a scheduled
     * reading), and returns once the reading is applied or refused.
     *
     * @return false when the refresh is stopped: nothing was read
     * @throws IllegalStateException when the reading does not end in time
     * @throws InterruptedException  when interrupted while waiting
     */
    boolean readNow() throws InterruptedException {
        try {
            timer.submit(this::readAgain).get(READ_NOW_SECONDS, TimeUnit.SECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("the settings could not be read again within " + READ_NOW_SECONDS + " s",
                    e);
        }
    }

    /** One reading; never throws, so the schedule goes on. */
    void readAgain() {
        FilterSettings read;
        List<String> warnings = new ArrayList<>();
        try {
            read = SettingsReader.read(source, warnings::add);
        } catch (InvalidSettingsException e) {
            logNew(warnings);
            logOnce(System.Logger.Level.WARNING, "The rate-limit settings read again are refused and the running ones "
                    + "kept: " + e.getMessage());
            return;
        } catch (RuntimeException e) {
            logOnce(System.Logger.Level.WARNING, "The rate-limit settings could not be read again; the running ones are "
                    + "kept: " + e);
            return;
        }
        logNew(warnings);
        if (read.equals(current)) {
            return;
        }
        List<String> ignored = new ArrayList<>();
        read.startUpOnly().forEach((name, value) -> {
            if (!Objects.equals(startUp.get(name), value)) {
                ignored.add(name);
            }
        });
        try {
            apply.accept(read);
        } catch (IllegalStateException e) {
            // A reading the application could not start with (an annotated method's rule gone): refused whole.
            logOnce(System.Logger.Level.WARNING, "The rate-limit settings read again are refused and the running ones "
                    + "kept: " + e.getMessage());
            return;
        }
        current = read;
        String notice = "Rate-limit settings refreshed: rules " + read.rules().stream().map(r -> r.rule().name()).toList()
                + " apply from now on" + (ignored.isEmpty() ? "" : "; " + String.join(", ", ignored)
                + " changed too, and take effect only when the application restarts");
        lastLogged = "";
        LOG.log(System.Logger.Level.INFO, notice);
    }

    /** Logs the warnings the reading before did not give; a settings source read again and again says each once. */
    private void logNew(List<String> warnings) {
        warnings.stream().filter(warning -> !lastWarnings.contains(warning)).forEach(SettingsReader::warn);
        lastWarnings = List.copyOf(warnings);
    }

    private void logOnce(System.Logger.Level level, String message) {
        if (!message.equals(lastLogged)) {
            lastLogged = message;
            LOG.log(level, message);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
