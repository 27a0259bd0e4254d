package dev.ratelimit;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * A fixed window that is a calendar period in a time zone: a day (midnight to midnight), an ISO
 * week (from Monday) or a month (from the first). Its length varies: a day with a daylight-saving
 * change has 23 or 25 hours, a month 28 to 31 days. Only {@link Algorithm#FIXED_WINDOW} takes one:
 * the other algorithms work on a rate (a bucket's refill, GCRA's emission interval, a sliding
 * window's weight of the previous window), which a period of varying length does not define.
 *
 * @param unit the calendar period
 * @param zone the time zone whose local dates the periods follow
 */
public record CalendarWindow(Unit unit, ZoneId zone) {

    /**
     * The calendar periods, each with the window setting that names it. A 1.x release may add
     * periods: a {@code switch} over them wants a {@code default}.
     */
    public enum Unit {
        /** Local midnight to local midnight. */
        DAY("calendar-day", Duration.ofDays(1)),
        /** An ISO week: Monday 00:00 to the next Monday 00:00. */
        WEEK("calendar-week", Duration.ofDays(7)),
        /** The first of the month 00:00 to the first of the next. */
        MONTH("calendar-month", Duration.ofDays(31));

        private final String id;
        private final Duration nominal;

        Unit(String id, Duration nominal) {
            this.id = id;
            this.nominal = nominal;
        }

        /** @return the window setting's value, e.g. {@code calendar-month} */
        public String id() {
            return id;
        }

        /**
         * The unit a window setting names.
         *
         * @param text a window setting's value
         * @return the unit, or empty when the text names none
         */
        public static Optional<Unit> fromId(String text) {
            return Arrays.stream(values()).filter(u -> u.id.equals(text.trim())).findFirst();
        }
    }

    /**
     * Checks the components.
     *
     * @throws NullPointerException if either is null
     */
    public CalendarWindow {
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(zone, "zone");
    }

    /**
     * A calendar window.
     *
     * @param unit the period
     * @param zone the zone
     * @return the window
     */
    public static CalendarWindow of(Unit unit, ZoneId zone) {
        return new CalendarWindow(unit, zone);
    }

    /**
     * Calendar days in a zone, midnight to midnight (23 or 25 hours on a daylight-saving day).
     *
     * @param zone the zone
     * @return the window
     */
    public static CalendarWindow day(ZoneId zone) {
        return new CalendarWindow(Unit.DAY, zone);
    }

    /**
     * ISO weeks in a zone, from Monday 00:00.
     *
     * @param zone the zone
     * @return the window
     */
    public static CalendarWindow week(ZoneId zone) {
        return new CalendarWindow(Unit.WEEK, zone);
    }

    /**
     * Calendar months in a zone, from the first at 00:00 (28 to 31 days).
     *
     * @param zone the zone
     * @return the window
     */
    public static CalendarWindow month(ZoneId zone) {
        return new CalendarWindow(Unit.MONTH, zone);
    }

    /**
     * The one length a {@link Rule} carries as its window where a single number is needed (the
     * bound on its arithmetic, a local lease's time, a plan's default): a day, seven days, or 31
     * days for a month, its longest. Every decision uses the period it falls in instead.
     *
     * @return the nominal length
     */
    public Duration nominal() {
        return unit.nominal;
    }

    /**
     * The period that contains an instant.
     *
     * @param nowMillis epoch milliseconds
     * @return its start and end
     */
    public Period period(long nowMillis) {
        LocalDate first = firstDay(Instant.ofEpochMilli(nowMillis).atZone(zone).toLocalDate());
        return new Period(startOf(first), startOf(next(first)));
    }

    /** @return e.g. {@code calendar-month in Europe/Berlin} */
    @Override
    public String toString() {
        return unit.id + " in " + zone.getId();
    }

    private LocalDate firstDay(LocalDate date) {
        return switch (unit) {
            case DAY -> date;
            case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
            case MONTH -> date.withDayOfMonth(1);
        };
    }

    private LocalDate next(LocalDate first) {
        return switch (unit) {
            case DAY -> first.plusDays(1);
            case WEEK -> first.plusWeeks(1);
            case MONTH -> first.plusMonths(1);
        };
    }

    private LocalDate previous(LocalDate first) {
        return switch (unit) {
            case DAY -> first.minusDays(1);
            case WEEK -> first.minusWeeks(1);
            case MONTH -> first.minusMonths(1);
        };
    }

    /** The first instant of a local date: local midnight, or the end of a gap that skips it. */
    private long startOf(LocalDate date) {
        return date.atStartOfDay(zone).toInstant().toEpochMilli();
    }

    /**
     * One calendar period.
     *
     * @param start its first epoch millisecond
     * @param end   the first epoch millisecond after it
     */
    public record Period(long start, long end) {

        /** @return its length: 23, 24 or 25 hours for most days, 28 to 31 days for a month */
        public Duration length() {
            return Duration.ofMillis(end - start);
        }
    }
}
