package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter's clock from the servlet context attribute {@code java.time.InstantSource}, on Jetty
 * and a real Valkey: with {@code ratelimit.clock=client} and in process it decides the windows
 * and the fields, set to a date that is not today's (a February, whose calendar month is 28 days
 * long, never December's 31, the month this was written in); with {@code ratelimit.clock=server}
 * Valkey's own clock still decides.
 */
@ExtendWith(ValkeyExtension.class)
class ClockAttributeTest {

    /** 2027-02-10T12:30:00Z: half an hour into an hour, in a 28-day month. */
    private static final long HALF_PAST = Instant.parse("2027-02-10T12:30:00Z").toEpochMilli();

    private final ValkeyServer valkey;
    private final AtomicLong millis = new AtomicLong(HALF_PAST);
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());

    ClockAttributeTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void theClientClockIsTheAttributes() throws Exception {
        Map<String, String> settings = rules(JettyApp.settings(valkey.url(), "ratelimit.clock", "client"));
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(InstantSource.class.getName(), clock))) {
            assertTheWindowsFollowTheClock(app);
        }
    }

    @Test
    void theInProcessLimiterRunsOnTheAttributesClock() throws Exception {
        Map<String, String> settings = rules(new HashMap<>());
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(InstantSource.class.getName(), clock))) {
            assertTheWindowsFollowTheClock(app);
        }
    }

    @Test
    void valkeysClockStillDecidesWithTheServerClock() throws Exception {
        Map<String, String> settings = rules(JettyApp.settings(valkey.url(), "ratelimit.clock", "server"));
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(InstantSource.class.getName(), clock))) {
            assertThat(app.get("/h/x", "X-Caller", "a").statusCode()).isEqualTo(200);
            long before = System.currentTimeMillis();
            HttpResponse<String> rejected = app.get("/h/x", "X-Caller", "a");
            long after = System.currentTimeMillis();
            assertThat(rejected.statusCode()).isEqualTo(429);
            // The real hour's rest, rounded up to seconds (this machine's clock is Valkey's here).
            long latest = (3_600_000 - before % 3_600_000 + 999) / 1000;
            long earliest = (3_600_000 - after % 3_600_000 + 999) / 1000;
            long t = Long.parseLong(rejected.headers().firstValue("RateLimit").orElseThrow().replaceAll(".*;t=", ""));
            assertThat(t).as("t of %s", rejected.headers().map()).isBetween(earliest - 1, latest);
        }
    }

    /**
     * A calendar month's {@code w} is February's, an hour's {@code t} is the half hour left on the
     * clock, and an hour later on the clock the hour's quota is back.
     */
    private void assertTheWindowsFollowTheClock(JettyApp app) throws Exception {
        HttpResponse<String> month = app.get("/m/x", "X-Caller", "a");
        assertThat(month.statusCode()).isEqualTo(200);
        assertThat(month.headers().firstValue("RateLimit-Policy")).hasValue("\"month\";q=2;w=" + 28 * 86_400);

        assertThat(app.get("/h/x", "X-Caller", "a").statusCode()).isEqualTo(200);
        HttpResponse<String> rejected = app.get("/h/x", "X-Caller", "a");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"hour\";r=0;t=1800");

        millis.addAndGet(3_600_000);
        assertThat(app.get("/h/x", "X-Caller", "a").statusCode()).as("the next hour on the clock").isEqualTo(200);
    }

    /** A calendar month on /m/*, an hour of one request on /h/*, per X-Caller; no deny cache (its holds are another matter). */
    private static Map<String, String> rules(Map<String, String> settings) {
        settings.putAll(Map.of("ratelimit.rules", "month,hour",
                "ratelimit.rule.month.algorithm", "fixed-window", "ratelimit.rule.month.limit", "2",
                "ratelimit.rule.month.window", "calendar-month", "ratelimit.rule.month.match", "/m/*",
                "ratelimit.rule.month.key", "header:X-Caller",
                "ratelimit.rule.hour.algorithm", "fixed-window", "ratelimit.rule.hour.limit", "1",
                "ratelimit.rule.hour.window", "1h", "ratelimit.rule.hour.match", "/h/*"));
        settings.put("ratelimit.rule.hour.key", "header:X-Caller");
        settings.put("ratelimit.deny-cache.enabled", "false");
        return settings;
    }
}
