package dev.ratelimit.config;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Misuses of calendar windows the first settings test does not try, all in one reading: each is
 * named with its property and value, every one at once, none silently read as something else.
 */
class CalendarSettingsEdgesTest {

    private static void rule(Map<String, String> m, String name, String algorithm, String window) {
        m.put("ratelimit.rule." + name + ".algorithm", algorithm);
        m.put("ratelimit.rule." + name + ".limit", "10");
        m.put("ratelimit.rule." + name + ".window", window);
    }

    @Test
    void everyOddCalendarSettingIsNamedAtOnce() {
        Map<String, String> m = new HashMap<>();
        m.put("ratelimit.valkey.url", "redis://localhost:6379");
        m.put("ratelimit.rules", "caps,year,lower,inflight,default,lease,planzone");
        rule(m, "caps", "fixed-window", "Calendar-Month");
        rule(m, "year", "fixed-window", "calendar-year");
        rule(m, "lower", "fixed-window", "calendar-day");
        m.put("ratelimit.rule.lower.time-zone", "europe/berlin");
        rule(m, "inflight", "concurrency", "calendar-day");
        m.put("ratelimit.rule.default.limit", "10");
        m.put("ratelimit.rule.default.window", "calendar-week");
        rule(m, "lease", "fixed-window", "calendar-day");
        m.put("ratelimit.rule.lease.local-lease", "2");
        m.put("ratelimit.rule.lease.local-lease-time", "2d");
        rule(m, "planzone", "fixed-window", "1h");
        m.put("ratelimit.rule.planzone.plan", "role:pro");
        m.put("ratelimit.rule.planzone.plan.pro.time-zone", "Asia/Tokyo");
        InvalidSettingsException e = (InvalidSettingsException) catchThrowable(
                () -> SettingsReader.read(new MapSettingsSource(m)));
        assertThat(e).as("the reading is refused").isNotNull();
        assertThat(e.getMessage())
                .contains("ratelimit.rule.caps.window='Calendar-Month' is not a duration")
                .contains("ratelimit.rule.year.window='calendar-year' is not a duration")
                .contains("a calendar window (calendar-day, calendar-week or calendar-month)")
                .contains("ratelimit.rule.lower.time-zone='europe/berlin'")
                .contains("ratelimit.rule.inflight.window='calendar-day'")
                .contains("ratelimit.rule.default.window='calendar-week'")
                .contains("ratelimit.rule.lease.local-lease='2' with local-lease-time 2d")
                .contains("ratelimit.rule.planzone.plan.pro.time-zone='Asia/Tokyo'");
        assertThat(e.problems()).hasSize(7);
    }
}
