package dev.ratelimit.valkey.script;

import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Rule;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The window argument of a rule in a function call: its window in ms, or for a calendar window
 * the text {@code "b0,b1,b2,b3"} of four period starts around the caller's now, from which
 * {@code fixed-window.lua} picks the period holding its own now (the server's clock, or the
 * client's). The text is kept per calendar window while the caller's now stays in the same
 * period, so a call mostly costs a map lookup, not a time-zone computation.
 */
final class CalendarArgument {

    /** The text computed last for each calendar window, with the period it holds for. */
    private static final Map<CalendarWindow, Cached> LAST = new ConcurrentHashMap<>();

    private record Cached(long from, long to, String text) {
    }

    private CalendarArgument() {
    }

    /**
     * The rule's window as the script takes it.
     *
     * @param rule      a rule
     * @param callerNow the caller's epoch ms: the client clock's, or this machine's when the
     *                  server's clock decides
     * @return the window in ms, or the calendar window's four boundaries
     */
    static String of(Rule rule, long callerNow) {
        CalendarWindow calendar = rule.calendar();
        if (calendar == null) {
            return Long.toString(rule.window().toMillis());
        }
        Cached cached = LAST.get(calendar);
        if (cached != null && callerNow >= cached.from && callerNow < cached.to) {
            return cached.text;
        }
        // Three periods, so that a store whose clock is off the caller's by less than a period
        // finds its own now among them.
        CalendarWindow.Period current = calendar.period(callerNow);
        CalendarWindow.Period previous = calendar.period(current.start() - 1);
        CalendarWindow.Period next = calendar.period(current.end());
        String text = previous.start() + "," + current.start() + "," + next.start() + "," + next.end();
        LAST.put(calendar, new Cached(current.start(), current.end(), text));
        return text;
    }
}
