package dev.ratelimit.valkey.script;

import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

class CalendarArgumentTest {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private static long berlin(String local) {
        return LocalDateTime.parse(local).atZone(BERLIN).toInstant().toEpochMilli();
    }

    @Test
    void aRollingWindowIsItsMilliseconds() {
        assertThat(CalendarArgument.of(Rule.of("r", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1)), 0))
                .isEqualTo("60000");
    }

    @Test
    void aCalendarWindowIsTheStartsOfFourConsecutivePeriodsAroundTheCallersNow() {
        Rule monthly = Rule.of("m", Algorithm.FIXED_WINDOW, 5, Duration.ofDays(1))
                .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.MONTH, BERLIN)).build();
        String expected = berlin("2026-02-01T00:00") + "," + berlin("2026-03-01T00:00") + ","
                + berlin("2026-04-01T00:00") + "," + berlin("2026-05-01T00:00");
        assertThat(CalendarArgument.of(monthly, berlin("2026-03-15T10:00"))).isEqualTo(expected);
        assertThat(CalendarArgument.of(monthly, berlin("2026-03-31T23:59"))).as("the same period, kept").isEqualTo(expected);
        assertThat(CalendarArgument.of(monthly, berlin("2026-04-01T00:00"))).as("the next period")
                .startsWith(berlin("2026-03-01T00:00") + "," + berlin("2026-04-01T00:00") + ",");
    }
}
