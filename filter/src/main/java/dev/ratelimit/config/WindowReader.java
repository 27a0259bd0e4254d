package dev.ratelimit.config;

import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Optional;

/**
 * Reads a rule's or a plan's {@code window}: a duration (windows aligned to the epoch) or a
 * calendar period, {@code calendar-day}, {@code calendar-week} or {@code calendar-month}, in the
 * zone of {@code time-zone} (an IANA id, default UTC). A calendar window is for fixed-window only
 * (see {@link CalendarWindow} why), and {@code time-zone} only for a calendar window; a plan's
 * calendar window without a {@code time-zone} of its own is in its rule's zone (UTC when the
 * rule's window is rolling). Problems go to the shared {@link SettingsValues}.
 */
final class WindowReader {

    /** The default zone, by the name settings and messages use ({@code ZoneOffset.UTC} would say "Z"). */
    private static final ZoneId UTC = ZoneId.of("UTC");

    private final SettingsValues values;

    WindowReader(SettingsValues values) {
        this.values = values;
    }

    /**
     * A window as read.
     *
     * @param window   the duration, or a calendar window's nominal length
     * @param calendar the calendar window, or null for a rolling one
     */
    record Window(Duration window, CalendarWindow calendar) {

        /** A window of a duration aligned to the epoch. */
        static Window rolling(Duration window) {
            return new Window(window, null);
        }

        /** A calendar window, carried at its nominal length. */
        static Window calendar(CalendarWindow calendar) {
            return new Window(calendar.nominal(), calendar);
        }
    }

    /**
     * Reads {@code <p>window} and {@code <p>time-zone}.
     *
     * @param p          the rule's or plan's prefix, ending in '.'
     * @param algorithm  the rule's algorithm
     * @param inherited  what applies when {@code <p>window} is not set: a plan's rule's window,
     *                   or empty where the window is required
     * @return the window; a one-second rolling window when a setting has a problem (recorded)
     */
    Window read(String p, Algorithm algorithm, Optional<Window> inherited) {
        Optional<String> text = inherited.isPresent() ? values.raw(p + "window") : values.required(p + "window");
        Optional<String> zoneText = values.raw(p + "time-zone");
        if (text.isEmpty()) {
            Window base = inherited.orElse(Window.rolling(Duration.ofSeconds(1)));
            if (zoneText.isPresent() && inherited.isPresent()) {
                // A plan that only moves the zone keeps its rule's calendar period.
                return base.calendar() == null ? rollingZone(p, zoneText.get(), Durations.format(base.window()))
                        : zone(p, zoneText.get()).map(z -> Window.calendar(CalendarWindow.of(base.calendar().unit(), z)))
                        .orElse(base);
            }
            return base;
        }
        Optional<CalendarWindow.Unit> unit = CalendarWindow.Unit.fromId(text.get());
        if (unit.isEmpty()) {
            if (Durations.parse(text.get()).isEmpty()) {
                // Named with both forms: "Calendar-Month" or "calendar-year" is a calendar window
                // misspelt, and a hint of durations alone would not say which words exist.
                values.problem(p + "window", text.get(), "is not a duration (e.g. 500ms, 30s, 15m, 1h, 1d or ISO-8601 "
                        + "PT15M) nor, for fixed-window, a calendar window (calendar-day, calendar-week or calendar-month)");
                return Window.rolling(Duration.ofSeconds(1));
            }
            Duration window = values.parseDuration(p + "window", text.get(), Duration.ofMillis(1));
            return zoneText.isPresent() ? rollingZone(p, zoneText.get(), text.get()) : Window.rolling(window);
        }
        if (algorithm != Algorithm.FIXED_WINDOW) {
            values.problem(p + "window", text.get(), "applies only to algorithm=fixed-window, not to " + algorithm.id()
                    + ": its rate (a bucket's refill, GCRA's emission interval, a sliding window's weight) is not "
                    + "defined over periods of varying length");
            return Window.rolling(Duration.ofSeconds(1));
        }
        // A plan's calendar window without a zone of its own keeps its rule's zone.
        ZoneId unset = inherited.map(Window::calendar).map(CalendarWindow::zone).orElse(UTC);
        ZoneId zone = zoneText.isEmpty() ? unset : zone(p, zoneText.get()).orElse(unset);
        return Window.calendar(CalendarWindow.of(unit.get(), zone));
    }

    /** A time zone set beside a rolling window: a problem, since such windows follow the epoch. */
    private Window rollingZone(String p, String zoneText, String windowText) {
        values.problem(p + "time-zone", zoneText, "applies only to a calendar window (calendar-day, calendar-week, "
                + "calendar-month), not to window=" + windowText + ", whose windows are aligned to the epoch");
        return Window.rolling(Duration.ofSeconds(1));
    }

    private Optional<ZoneId> zone(String p, String text) {
        try {
            return Optional.of(ZoneId.of(text.trim()));
        } catch (DateTimeException e) {
            values.problem(p + "time-zone", text, "is not a time zone: use an IANA id such as Europe/Berlin, or UTC");
            return Optional.empty();
        }
    }
}
