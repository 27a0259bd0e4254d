package dev.ratelimit.it;

import dev.ratelimit.CalendarWindow;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refresh that edits a rule's window kind or zone between calls, with the deny cache on: a
 * rolling day turned into a calendar day in a zone, then its zone moved, then back to a rolling
 * hour. Each new rule holds from the next request (no rejection remembered from the old rule
 * outlives it), the units taken count in full under it, and no reading grants beyond it; a
 * reading with a time zone beside a rolling window is refused whole.
 */
@ExtendWith(ValkeyExtension.class)
class CalendarRefreshTest {

    private static final long REFRESH_MILLIS = 200;

    private final ValkeyServer valkey;

    CalendarRefreshTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private static int allowedOf(JettyApp app, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            allowed += app.get("/api", "X-Caller", "a").statusCode() == 200 ? 1 : 0;
        }
        return allowed;
    }

    private static String policy(JettyApp app) throws Exception {
        return policy(app, "policy-only");
    }

    private static String policy(JettyApp app, String caller) throws Exception {
        HttpResponse<String> response = app.get("/api", "X-Caller", caller);
        return response.headers().firstValue("RateLimit-Policy").orElseThrow();
    }

    /**
     * Waits for a refresh to apply: until a caller never seen before gets a policy that starts
     * so (30 s at most, for a busy machine). The limit is the last setting each edit puts, so
     * the whole edit has been read by then.
     */
    private static void awaitPolicy(JettyApp app, String start) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (int i = 0; !policy(app, "new-" + i).startsWith(start); i++) {
            assertThat(System.nanoTime() - deadline).as("the refresh applied within 30 s").isNegative();
            Thread.sleep(50);
        }
    }

    /**
     * Gives a bad reading time to be read and refused: nothing changes either way, so a slow
     * machine only makes the check weaker, never wrong.
     */
    private static void awaitRefusal() throws InterruptedException {
        Thread.sleep(3 * REFRESH_MILLIS);
    }

    @Test
    void editsOfTheWindowKindAndZoneHoldFromTheNextRequestAndKeepTheCounts() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", "3",
                "ratelimit.rule.api.window", "1d", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.refresh", REFRESH_MILLIS + "ms"));
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(allowedOf(app, 4)).as("3 of the rolling day, then a remembered rejection").isEqualTo(3);

            source.values.put("ratelimit.rule.api.window", "calendar-day");
            source.values.put("ratelimit.rule.api.time-zone", "Pacific/Kiritimati");
            source.values.put("ratelimit.rule.api.limit", "5");
            awaitPolicy(app, "\"api\";q=5;");
            long now = System.currentTimeMillis();
            long w = CalendarWindow.of(CalendarWindow.Unit.DAY, ZoneId.of("Pacific/Kiritimati")).period(now).length()
                    .toSeconds();
            assertThat(policy(app)).isEqualTo("\"api\";q=5;w=" + w);
            assertThat(allowedOf(app, 4)).as("5 - 3 taken under the rolling day").isEqualTo(2);

            source.values.put("ratelimit.rule.api.time-zone", "America/New_York");
            source.values.put("ratelimit.rule.api.limit", "7");
            awaitPolicy(app, "\"api\";q=7;");
            assertThat(allowedOf(app, 4)).as("7 - 5 taken in Kiritimati's day").isEqualTo(2);

            // A bad reading: a zone beside a rolling window; refused whole, the running rule stays.
            source.values.put("ratelimit.rule.api.window", "1h");
            source.values.put("ratelimit.rule.api.limit", "100");
            awaitRefusal();
            assertThat(policy(app)).as("the running settings").startsWith("\"api\";q=7;");
            assertThat(allowedOf(app, 1)).isZero();

            source.values.remove("ratelimit.rule.api.time-zone");
            source.values.put("ratelimit.rule.api.limit", "9");
            awaitPolicy(app, "\"api\";q=9;w=3600");
            assertThat(policy(app)).isEqualTo("\"api\";q=9;w=3600");
            assertThat(allowedOf(app, 4)).as("9 - 7 taken").isEqualTo(2);
        }
    }
}
