package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Calendar windows on the server's clock: the client passes the periods around its now and the
 * script picks the one holding Valkey's {@code TIME}; a time outside them is an error, never a
 * count in a period nobody named; the filter's fields say the period's length and the time to
 * its end.
 */
@ExtendWith(ValkeyExtension.class)
class CalendarServerClockTest {

    /** UTC+14: its days and months end at other instants than UTC's. */
    private static final ZoneId KIRITIMATI = ZoneId.of("Pacific/Kiritimati");

    private final ValkeyServer valkey;

    CalendarServerClockTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void theServersClockPicksThePeriodAndTheKeyExpiresAtItsEnd() {
        CalendarWindow month = CalendarWindow.of(CalendarWindow.Unit.MONTH, KIRITIMATI);
        Rule rule = Rule.of("monthly", Algorithm.FIXED_WINDOW, 2, Duration.ofDays(1)).toBuilder().calendar(month).build();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).build();
             Jedis inspect = valkey.connect()) {
            long before = System.currentTimeMillis();
            assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
            assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
            Decision refused = limiter.acquire(rule, "k");
            long after = System.currentTimeMillis();
            long end = month.period(before).end();
            assertThat(refused.allowed()).isFalse();
            // The server's clock and this one agree within a second or two on one machine.
            assertThat(refused.retryAfter().toMillis()).isBetween(end - after - 2_000, end - before + 2_000);
            long ttl = inspect.pttl(limiter.stateKey(rule, "k"));
            assertThat(ttl).as("the key lives until the period ends").isBetween(end - after - 2_000, end - before + 2_000);
            // What an operator's inspect shows (the command line, the MBean): the state ends with the period.
            String described = limiter.inspector().inspect(rule, "k", 1).describe();
            assertThat(described).contains("rejected now").contains("0 of 2 remaining").contains("\n    " + end + ":2:");
        }
    }

    /**
     * The script's own check: boundaries that do not hold the call's now (a clock off by more
     * than a period) fail the call, naming why, and write nothing.
     */
    @Test
    void aNowOutsideThePeriodsGivenIsAnErrorNotAGrant() {
        Rule rule = Rule.of("daily", Algorithm.FIXED_WINDOW, 2, Duration.ofDays(1))
                .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.DAY, KIRITIMATI)).build();
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build();
             Jedis jedis = valkey.connect()) {
            limiter.acquire(rule, "load"); // loads the library
            String function = valkey.limiterFunction();
            // now = 10^12 ms (2001), periods of 1970: far outside.
            assertThatThrownBy(() -> jedis.fcall(function, java.util.List.of("k"), java.util.List.of("1000000000000", "1",
                    "7", "fixed-window", "2", "0,1000,2000,3000", "2", "1", "0", "0", "0")))
                    .isInstanceOf(JedisDataException.class).hasMessageContaining("RATELIMIT_CALENDAR")
                    .hasMessageContaining("outside the calendar periods");
            assertThat(jedis.exists("k")).isFalse();
        }
    }

    /** The filter's fields: w is the current period's length, t the seconds to its end. */
    @Test
    void theFieldsSayThePeriodsLengthAndTheTimeToItsEnd() throws Exception {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "daily,monthly",
                "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "100",
                "ratelimit.rule.daily.window", "calendar-day", "ratelimit.rule.daily.time-zone", KIRITIMATI.getId(),
                "ratelimit.rule.monthly.algorithm", "fixed-window", "ratelimit.rule.monthly.limit", "10000",
                "ratelimit.rule.monthly.window", "calendar-month", "ratelimit.rule.monthly.time-zone", "Europe/Berlin",
                "ratelimit.headers", "draft");
        try (JettyApp app = JettyApp.start(m)) {
            long before = System.currentTimeMillis();
            HttpResponse<String> response = app.get("/");
            long after = System.currentTimeMillis();
            var policy = StructuredFields.parseList(response.headers().firstValue("RateLimit-Policy").orElseThrow());
            var state = StructuredFields.parseList(response.headers().firstValue("RateLimit").orElseThrow());
            CalendarWindow day = CalendarWindow.of(CalendarWindow.Unit.DAY, KIRITIMATI);
            CalendarWindow month = CalendarWindow.of(CalendarWindow.Unit.MONTH, ZoneId.of("Europe/Berlin"));
            assertThat(policy.get(0).param("w")).isEqualTo(day.period(before).length().toSeconds());
            assertThat(policy.get(1).param("w")).as("this month's length").isEqualTo(month.period(before).length().toSeconds());
            assertThat(state.get(0).param("r")).isEqualTo(99);
            assertThat(state.get(0).param("t")).isBetween((day.period(before).end() - after) / 1000 - 2,
                    (day.period(before).end() - before) / 1000 + 2);
            assertThat(state.get(1).param("t")).isBetween((month.period(before).end() - after) / 1000 - 2,
                    (month.period(before).end() - before) / 1000 + 2);
        }
    }
}
