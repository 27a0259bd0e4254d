package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The periods of a calendar window: local midnights, ISO weeks, months, across zone changes. */
class CalendarWindowTest {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private static long berlin(String local) {
        return LocalDateTime.parse(local).atZone(BERLIN).toInstant().toEpochMilli();
    }

    @Test
    void aDayFollowsLocalMidnightsThroughDaylightSavingChanges() {
        CalendarWindow day = CalendarWindow.of(CalendarWindow.Unit.DAY, BERLIN);
        assertThat(day.period(berlin("2026-03-29T12:00")).length()).isEqualTo(Duration.ofHours(23));
        assertThat(day.period(berlin("2026-10-25T12:00")).length()).isEqualTo(Duration.ofHours(25));
        assertThat(day.period(berlin("2026-10-25T00:00")).start()).isEqualTo(berlin("2026-10-25T00:00"));
        assertThat(day.period(berlin("2026-10-24T23:59:59.999")).end()).isEqualTo(berlin("2026-10-25T00:00"));
    }

    @Test
    void aMonthRunsFromTheFirstToTheFirst() {
        CalendarWindow month = CalendarWindow.of(CalendarWindow.Unit.MONTH, BERLIN);
        CalendarWindow.Period february = month.period(berlin("2026-02-28T23:59:59.999"));
        assertThat(february.start()).isEqualTo(berlin("2026-02-01T00:00"));
        assertThat(february.end()).isEqualTo(berlin("2026-03-01T00:00"));
        assertThat(month.period(berlin("2028-02-15T00:00")).length()).as("a leap year").isEqualTo(Duration.ofDays(29));
        assertThat(month.period(berlin("2026-01-31T00:00")).length()).isEqualTo(Duration.ofDays(31));
    }

    @Test
    void aWeekStartsOnMonday() {
        CalendarWindow week = CalendarWindow.of(CalendarWindow.Unit.WEEK, ZoneOffset.UTC);
        // 2026-12-06 is a Sunday.
        long sunday = LocalDateTime.parse("2026-12-06T23:00").toInstant(ZoneOffset.UTC).toEpochMilli();
        CalendarWindow.Period period = week.period(sunday);
        assertThat(period.start()).isEqualTo(LocalDateTime.parse("2026-11-30T00:00").toInstant(ZoneOffset.UTC).toEpochMilli());
        assertThat(period.length()).isEqualTo(Duration.ofDays(7));
    }

    @Test
    void aZoneThatSkippedADayGivesTheDayAfterItsWholeLength() {
        // Samoa went from 2011-12-29 to 2011-12-31: the 30th never was.
        ZoneId apia = ZoneId.of("Pacific/Apia");
        CalendarWindow day = CalendarWindow.of(CalendarWindow.Unit.DAY, apia);
        long now = LocalDateTime.parse("2011-12-31T10:00").atZone(apia).toInstant().toEpochMilli();
        CalendarWindow.Period period = day.period(now);
        assertThat(period.start()).isEqualTo(LocalDateTime.parse("2011-12-31T00:00").atZone(apia).toInstant().toEpochMilli());
        assertThat(period.length()).isEqualTo(Duration.ofHours(24));
        assertThat(day.period(period.start() - 1).end()).as("the 29th ends where the 31st starts")
                .isEqualTo(period.start());
    }

    @Test
    void onlyAFixedWindowTakesACalendar() {
        Rule bucket = Rule.of("b", Algorithm.TOKEN_BUCKET, 10, Duration.ofDays(1));
        assertThatThrownBy(() -> bucket.toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.DAY, BERLIN)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only to fixed-window");
        Rule daily = Rule.of("f", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1))
                .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.MONTH, BERLIN)).build();
        assertThat(daily.window()).isEqualTo(Duration.ofDays(31));
        assertThat(daily.quotaWindow(berlin("2026-02-10T00:00"))).isEqualTo(Duration.ofDays(28));
        assertThat(daily.toBuilder().calendar(null).build().calendar()).isNull();
    }
}
