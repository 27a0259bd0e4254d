package dev.ratelimit.it.checker;

import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.List;

/**
 * The aligned windows of an HTTP run (fixed windows, calendar ones included, and sliding window
 * counters, own and plans):
 * the filter decides on the app's clock (the wall clock's pace), known only as an interval, so requests keep clear of a
 * window's start and a decision that still straddles one is said so in the history.
 */
final class AlignedWindows {

    /** Before an aligned window starts, requests wait this long for it, so decisions do not straddle it. */
    private static final long BOUNDARY_GUARD_MILLIS = 2_000;

    private AlignedWindows() {
    }

    /**
     * The rules whose aligned starts matter: fixed windows (aligned to the epoch, or calendar
     * periods) and sliding window counters, own and plans.
     */
    private static List<Rule> of(List<HttpWorkload.Spec> rules) {
        List<Rule> windows = new ArrayList<>();
        for (HttpWorkload.Spec spec : rules) {
            switch (spec.rule().algorithm()) {
                case FIXED_WINDOW, SLIDING_WINDOW_COUNTER -> {
                    windows.addAll(List.of(spec.rule(), spec.basic(), spec.pro()));
                }
                default -> {
                    // a sliding log or a bucket has no aligned windows
                }
            }
        }
        return windows;
    }

    /** Sleeps past an aligned window's start that is due within the guard, on the filter's clock. */
    static void await(List<HttpWorkload.Spec> rules, java.util.function.LongSupplier clock) {
        long now = clock.getAsLong();
        long until = now;
        for (Rule rule : of(rules)) {
            long next = Calendars.window(rule, now)[1];
            if (next - now < BOUNDARY_GUARD_MILLIS) {
                until = Math.max(until, next + 5);
            }
        }
        if (until > now) {
            try {
                Thread.sleep(until - now);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** Whether a decision made in [from, to] may fall on either side of an aligned window's start. */
    static boolean straddles(List<HttpWorkload.Spec> rules, long from, long to) {
        for (Rule rule : of(rules)) {
            if (Calendars.window(rule, from)[0] != Calendars.window(rule, to)[0]) {
                return true;
            }
        }
        return false;
    }
}
