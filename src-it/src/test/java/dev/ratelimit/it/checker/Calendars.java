package dev.ratelimit.it.checker;

import dev.ratelimit.CalendarWindow;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Random;

/**
 * Calendar windows in the checker's workloads. A fixed-window rule may be a calendar day, ISO
 * week or month in a zone with daylight saving (or UTC, or half-hour DST), and a run with one
 * starts its client clock shortly before one of that calendar's period ends, chosen among the
 * interesting ones (the days Berlin's clocks change, a February's end, a 31-day month's end), so
 * that the steps cross it; the bounds count per period ({@link #window}).
 */
final class Calendars {

    private static final List<ZoneId> ZONES = List.of(ZoneId.of("UTC"), ZoneId.of("Europe/Berlin"),
            ZoneId.of("America/New_York"), ZoneId.of("Australia/Lord_Howe"), ZoneId.of("Pacific/Kiritimati"));
    /** Moments whose period ends are worth crossing, as local times of the rule's zone. */
    private static final List<String> ANCHORS = List.of("2026-03-29T12:00", "2026-10-25T12:00", "2026-02-27T12:00",
            "2026-01-31T12:00", "2026-11-01T12:00");
    /** The most client time before the period's end a run starts. */
    private static final int LEAD_MILLIS = 120_000;

    private Calendars() {
    }

    /** A calendar window drawn from the stream. */
    static CalendarWindow draw(Random random) {
        CalendarWindow.Unit unit = CalendarWindow.Unit.values()[random.nextInt(CalendarWindow.Unit.values().length)];
        return CalendarWindow.of(unit, ZONES.get(random.nextInt(ZONES.size())));
    }

    /** A client clock start up to two minutes before the end of an interesting period of the calendar. */
    static long clockStart(Random random, CalendarWindow calendar) {
        return interestingEnd(random, calendar) - 1 - random.nextInt(LEAD_MILLIS);
    }

    /** The end of one of the calendar's interesting periods (see {@link #ANCHORS}), drawn from the stream. */
    static long interestingEnd(Random random, CalendarWindow calendar) {
        long anchor = LocalDateTime.parse(ANCHORS.get(random.nextInt(ANCHORS.size()))).atZone(calendar.zone())
                .toInstant().toEpochMilli();
        return calendar.period(anchor).end();
    }

    /** The rule with the calendar window, and its local failure policy's rule with it too. */
    static FailurePolicy policy(FailurePolicy policy, CalendarWindow calendar) {
        return policy instanceof FailurePolicy.Local local
                ? FailurePolicy.local(local.rule().toBuilder().calendar(calendar).build()) : policy;
    }

    /**
     * The fixed window holding {@code t}: the calendar period, or the window aligned to the epoch.
     *
     * @return {start, end}
     */
    static long[] window(Rule rule, long t) {
        if (rule.calendar() != null) {
            CalendarWindow.Period period = rule.calendar().period(t);
            return new long[] {period.start(), period.end()};
        }
        long window = rule.window().toMillis();
        long start = t - Math.floorMod(t, window);
        return new long[] {start, start + window};
    }

    /** The longest a fixed window of the rule can last: a calendar period's nominal length and a day of margin. */
    static long longest(Rule rule) {
        return rule.calendar() == null ? rule.window().toMillis() : rule.window().plus(Duration.ofDays(1)).toMillis();
    }

    /** A calendar window as an edit writes it, {@code calendar-day Europe/Berlin}, or null. */
    static String text(CalendarWindow calendar) {
        return calendar == null ? null : calendar.unit().id() + " " + calendar.zone().getId();
    }

    /** The calendar window an edit wrote, or null. */
    static CalendarWindow parse(String text) {
        if (text == null) {
            return null;
        }
        String[] parts = text.split(" ");
        return CalendarWindow.of(CalendarWindow.Unit.fromId(parts[0]).orElseThrow(), ZoneId.of(parts[1]));
    }
}
