package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.zone.ZoneRulesProvider;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A daylight-saving day today, on the server's clock: a zone of this test's own, registered with
 * {@link ZoneRulesProvider}, moved its clocks forward an hour two hours ago and reaches midnight
 * a few seconds after the test begins, so the current day has 23 hours. Over HTTP, the fields
 * say so: {@code w} is 82,800 and {@code t} the seconds left; a rejection's {@code Retry-After}
 * ends with the day; after the midnight the next day (24 hours) is whole.
 */
@ExtendWith(ValkeyExtension.class)
class CalendarDaylightSavingNowTest {

    private static final String ZONE = "Test/SpringForwardToday";
    private static final long DAY = 86_400_000L;
    static {
        // Only the zone's name now: its rules are made when first asked for (Today), which the
        // test does just before starting the app, so the midnight is that far from the test
        // itself, however long after the class loaded it runs.
        ZoneRulesProvider.registerProvider(new ZoneRulesProvider() {
            @Override
            protected Set<String> provideZoneIds() {
                return Set.of(ZONE);
            }

            @Override
            protected ZoneRules provideRules(String zoneId, boolean forCaching) {
                return Today.RULES;
            }

            @Override
            protected NavigableMap<String, ZoneRules> provideVersions(String zoneId) {
                return new TreeMap<>(Map.of("test", Today.RULES));
            }
        });
    }

    /** The zone's rules, made once, at the first use. */
    private static final class Today {

        /** The zone's next midnight: seconds after the first use, a whole second. */
        static final long MIDNIGHT = (System.currentTimeMillis() / 1000 + 15) * 1000;
        static final ZoneRules RULES = rules();

        private static ZoneRules rules() {
            long offset = Math.floorMod(-MIDNIGHT, DAY) / 1000;
            if (offset > 17 * 3600) {
                offset -= 24 * 3600;
            }
            ZoneOffset after = ZoneOffset.ofTotalSeconds((int) offset);
            ZoneOffset before = ZoneOffset.ofTotalSeconds((int) offset - 3600);
            long shift = MIDNIGHT - 2 * 3_600_000L;
            ZoneOffsetTransition forward = ZoneOffsetTransition.of(
                    LocalDateTime.ofEpochSecond(shift / 1000, 0, before), before, after);
            return ZoneRules.of(before, before, List.of(), List.of(forward), List.of());
        }
    }

    private final ValkeyServer valkey;

    CalendarDaylightSavingNowTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private static long param(String field, String name) {
        return ((Number) StructuredFields.parseList(field).get(0).param(name)).longValue();
    }

    @Test
    void theFieldsOfATwentyThreeHourDayAndTheNextDay() throws Exception {
        long midnight = Today.MIDNIGHT;
        assertThat(java.time.ZoneId.of(ZONE).getRules().getOffset(Instant.ofEpochMilli(midnight)).getTotalSeconds()
                - java.time.ZoneId.of(ZONE).getRules().getOffset(Instant.ofEpochMilli(midnight - DAY)).getTotalSeconds())
                .as("the zone moved forward an hour in the last day").isEqualTo(3600);
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "daily",
                "ratelimit.rule.daily.algorithm", "fixed-window", "ratelimit.rule.daily.limit", "2",
                "ratelimit.rule.daily.window", "calendar-day", "ratelimit.rule.daily.time-zone", ZONE,
                "ratelimit.headers", "draft");
        try (JettyApp app = JettyApp.start(m); Jedis jedis = valkey.connect()) {
            long before = System.currentTimeMillis();
            assertThat(before).as("the test began a few seconds ago").isLessThan(midnight - 1_000);
            HttpResponse<String> first = app.get("/");
            HttpResponse<String> second = app.get("/");
            HttpResponse<String> refused = app.get("/");
            long after = System.currentTimeMillis();
            if (after >= midnight - 500) {
                // Too slow a machine to see the old day's end from inside it: nothing to conclude.
                throw new org.opentest4j.TestAbortedException("the three requests took until the midnight");
            }
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(second.statusCode()).isEqualTo(200);
            String policy = first.headers().firstValue("RateLimit-Policy").orElseThrow();
            assertThat(param(policy, "w")).as("a day of 23 hours").isEqualTo(23 * 3600);
            long t = param(first.headers().firstValue("RateLimit").orElseThrow(), "t");
            assertThat(t).as("seconds to the midnight").isBetween((midnight - after) / 1000, (midnight - before) / 1000 + 1);
            assertThat(refused.statusCode()).isEqualTo(429);
            long retry = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
            assertThat(retry).as("until the midnight").isBetween((midnight - after) / 1000, (midnight - before) / 1000 + 1);

            while (serverNow(jedis) < midnight + 50) {
                Thread.sleep(20);
            }
            HttpResponse<String> next = app.get("/");
            assertThat(next.statusCode()).as("the next day").isEqualTo(200);
            assertThat(param(next.headers().firstValue("RateLimit-Policy").orElseThrow(), "w")).isEqualTo(24 * 3600);
            assertThat(param(next.headers().firstValue("RateLimit").orElseThrow(), "r")).isEqualTo(1);
            assertThat(param(next.headers().firstValue("RateLimit").orElseThrow(), "t"))
                    .isBetween(24 * 3600 - 60L, 24 * 3600L);
        }
    }

    private static long serverNow(Jedis jedis) {
        List<String> time = jedis.time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }
}
