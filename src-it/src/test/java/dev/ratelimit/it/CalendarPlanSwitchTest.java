package dev.ratelimit.it;

import dev.ratelimit.CalendarWindow;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A caller moved between plans whose windows differ in kind and zone, on one key, the deny cache
 * on: a rolling hour (the rule's own), a calendar day at UTC+14, a calendar day in Tokyo. The
 * units taken count in full under each plan (no grant beyond it), and a rejection's
 * {@code Retry-After} never reaches past the end of the state the previous plan wrote.
 */
@ExtendWith(ValkeyExtension.class)
class CalendarPlanSwitchTest {

    private final ValkeyServer valkey;

    CalendarPlanSwitchTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private static HttpResponse<String> call(JettyApp app, String plan) throws Exception {
        return app.get("/api", "X-Caller", "c", "X-Plan", plan);
    }

    private static int allowed(JettyApp app, String plan, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            allowed += call(app, plan).statusCode() == 200 ? 1 : 0;
        }
        return allowed;
    }

    private static long retryAfter(HttpResponse<String> response) {
        assertThat(response.statusCode()).isEqualTo(429);
        return Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow());
    }

    private static long secondsToEnd(CalendarWindow.Unit unit, String zone) {
        long now = System.currentTimeMillis();
        return (CalendarWindow.of(unit, ZoneId.of(zone)).period(now).end() - now) / 1000 + 2;
    }

    @Test
    void aCallerMovedBetweenRollingAndCalendarPlansKeepsItsUnitsAndNoLongerBlock() throws Exception {
        try (JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", "2",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.trusted-proxies", "127.0.0.1/32",
                "ratelimit.rule.api.plan.islands.limit", "4",
                "ratelimit.rule.api.plan.islands.window", "calendar-day",
                "ratelimit.rule.api.plan.islands.time-zone", "Pacific/Kiritimati",
                "ratelimit.rule.api.plan.tokyo.limit", "6",
                "ratelimit.rule.api.plan.tokyo.window", "calendar-day",
                "ratelimit.rule.api.plan.tokyo.time-zone", "Asia/Tokyo"))) {
            long hourLeft = 3600 - (System.currentTimeMillis() / 1000) % 3600 + 2;
            assertThat(allowed(app, "none", 3)).as("the rule's 2 an hour").isEqualTo(2);
            assertThat(retryAfter(call(app, "none"))).isLessThanOrEqualTo(hourLeft);

            assertThat(allowed(app, "islands", 3)).as("4 a day at UTC+14, 2 taken").isEqualTo(2);
            HttpResponse<String> islandsRefused = call(app, "islands");
            assertThat(islandsRefused.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=4;w=86400");
            assertThat(retryAfter(islandsRefused)).isLessThanOrEqualTo(secondsToEnd(CalendarWindow.Unit.DAY,
                    "Pacific/Kiritimati"));

            // Back to the hour: the 4 units count; blocked no longer than the day that wrote them.
            assertThat(retryAfter(call(app, "none"))).isLessThanOrEqualTo(secondsToEnd(CalendarWindow.Unit.DAY,
                    "Pacific/Kiritimati"));

            assertThat(allowed(app, "tokyo", 3)).as("6 a day in Tokyo, 4 taken").isEqualTo(2);
            assertThat(retryAfter(call(app, "tokyo"))).isLessThanOrEqualTo(secondsToEnd(CalendarWindow.Unit.DAY,
                    "Asia/Tokyo"));
        }
    }
}
