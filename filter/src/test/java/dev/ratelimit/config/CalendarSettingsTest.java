package dev.ratelimit.config;

import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** {@code window=calendar-*} and {@code time-zone}: one setting each, and every misuse named at once. */
class CalendarSettingsTest {

    private static Map<String, String> monthly() {
        Map<String, String> m = new HashMap<>();
        m.put("ratelimit.valkey.url", "redis://localhost:6379");
        m.put("ratelimit.rules", "messages,daily");
        m.put("ratelimit.rule.messages.algorithm", "fixed-window");
        m.put("ratelimit.rule.messages.limit", "10000");
        m.put("ratelimit.rule.messages.window", "calendar-month");
        m.put("ratelimit.rule.messages.time-zone", "Europe/Berlin");
        m.put("ratelimit.rule.daily.algorithm", "fixed-window");
        m.put("ratelimit.rule.daily.limit", "100");
        m.put("ratelimit.rule.daily.window", "calendar-day");
        return m;
    }

    private static FilterSettings read(Map<String, String> values) {
        return SettingsReader.read(new MapSettingsSource(values));
    }

    private static Rule rule(FilterSettings settings, String name) {
        return settings.rule(name).orElseThrow().rule();
    }

    @Test
    void aCalendarMonthInAZoneAndALocalDayInUtcAreOneSettingEach() {
        FilterSettings settings = read(monthly());
        Rule messages = rule(settings, "messages");
        assertThat(messages.calendar()).isEqualTo(CalendarWindow.of(CalendarWindow.Unit.MONTH, ZoneId.of("Europe/Berlin")));
        assertThat(messages.window()).isEqualTo(Duration.ofDays(31));
        assertThat(rule(settings, "daily").calendar()).isEqualTo(CalendarWindow.of(CalendarWindow.Unit.DAY, ZoneId.of("UTC")));
        assertThat(rule(settings, "daily").calendar()).hasToString("calendar-day in UTC");
        assertThat(settings.rule("daily").orElseThrow().localRule().calendar()).as("the fallback's periods too")
                .isNotNull();
    }

    @Test
    void aPlanTakesItsOwnCalendarWindowOrZoneUnderTheSameRules() {
        Map<String, String> m = monthly();
        m.put("ratelimit.rule.messages.plan", "role:pro,basic");
        m.put("ratelimit.rule.messages.plan.pro.limit", "50000");
        m.put("ratelimit.rule.messages.plan.pro.time-zone", "America/New_York");
        m.put("ratelimit.rule.messages.plan.basic.window", "calendar-week");
        m.put("ratelimit.rule.daily.plan", "role:pro");
        m.put("ratelimit.rule.daily.plan.pro.window", "1h");
        FilterSettings settings = read(m);
        Rule pro = settings.rule("messages").orElseThrow().plans().get("pro");
        assertThat(pro.calendar()).isEqualTo(CalendarWindow.of(CalendarWindow.Unit.MONTH, ZoneId.of("America/New_York")));
        assertThat(settings.rule("messages").orElseThrow().plans().get("basic").calendar()).as("the rule's zone")
                .isEqualTo(CalendarWindow.of(CalendarWindow.Unit.WEEK, ZoneId.of("Europe/Berlin")));
        Rule hourly = settings.rule("daily").orElseThrow().plans().get("pro");
        assertThat(hourly.calendar()).isNull();
        assertThat(hourly.window()).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void everyMisuseIsNamedWithItsPropertyValueAndRuleAtOnce() {
        Map<String, String> m = monthly();
        m.put("ratelimit.rules", "messages,daily,bucket,rolling,plans");
        m.put("ratelimit.rule.messages.time-zone", "Europe/Atlantis");
        m.put("ratelimit.rule.bucket.algorithm", "token-bucket");
        m.put("ratelimit.rule.bucket.limit", "10");
        m.put("ratelimit.rule.bucket.window", "calendar-week");
        m.put("ratelimit.rule.rolling.algorithm", "fixed-window");
        m.put("ratelimit.rule.rolling.limit", "10");
        m.put("ratelimit.rule.rolling.window", "1d");
        m.put("ratelimit.rule.rolling.time-zone", "Europe/Berlin");
        m.put("ratelimit.rule.plans.algorithm", "sliding-log");
        m.put("ratelimit.rule.plans.limit", "10");
        m.put("ratelimit.rule.plans.window", "1h");
        m.put("ratelimit.rule.plans.plan", "role:pro");
        m.put("ratelimit.rule.plans.plan.pro.window", "calendar-day");
        InvalidSettingsException e = (InvalidSettingsException) catchThrowable(() -> read(m));
        assertThat(e).isNotNull();
        assertThat(e.problems()).hasSize(4);
        assertThat(e.getMessage())
                .contains("ratelimit.rule.messages.time-zone='Europe/Atlantis'").contains("is not a time zone")
                .contains("ratelimit.rule.bucket.window='calendar-week'").contains("not to token-bucket")
                .contains("ratelimit.rule.rolling.time-zone='Europe/Berlin'").contains("not to window=1d")
                .contains("ratelimit.rule.plans.plan.pro.window='calendar-day'").contains("not to sliding-log");
    }
}
