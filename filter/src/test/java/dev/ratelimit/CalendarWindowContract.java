package dev.ratelimit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every limiter must answer for a fixed window that is a calendar period: the period is the
 * local day, ISO week or month of the rule's zone, 23 or 25 hours on a daylight-saving day and 28
 * to 31 days for a month; the count weighs until the period's local end, the new period starts
 * empty, and an edit between a rolling and a calendar window follows the edit rules (the units
 * taken still count; a block never outlasts the old state). The in-process limiter runs it in
 * {@code filter/}, the Valkey limiter (client clock) the very same cases in {@code src-it/}.
 */
public abstract class CalendarWindowContract extends ManualClockLimiterTest {

    /** The zone of the daylight-saving cases: Europe/Berlin, 2026-03-29 has 23 hours, 2026-10-25 25. */
    protected static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    @Override
    protected long startMillis() {
        return at("2026-03-29T00:30");
    }

    /** Epoch ms of a Berlin local time. */
    protected static long at(String berlinLocal) {
        return LocalDateTime.parse(berlinLocal).atZone(BERLIN).toInstant().toEpochMilli();
    }

    /** A fixed-window rule of a limit per calendar period in Berlin. */
    protected static Rule calendar(String name, long limit, CalendarWindow.Unit unit) {
        return Rule.of(name, Algorithm.FIXED_WINDOW, limit, Duration.ofDays(1))
                .toBuilder().calendar(CalendarWindow.of(unit, BERLIN)).build();
    }

    /**
     * Periods of every kind around their edges: a time inside the period, the local end that
     * follows, and the period's length in hours.
     */
    static Stream<Arguments> periods() {
        return Stream.of(
                Arguments.of("day of 23 h (DST starts)", CalendarWindow.Unit.DAY, "2026-03-29T01:15", "2026-03-30T00:00", 23),
                Arguments.of("day of 25 h (DST ends)", CalendarWindow.Unit.DAY, "2026-10-25T02:30", "2026-10-26T00:00", 25),
                Arguments.of("ordinary day", CalendarWindow.Unit.DAY, "2026-06-10T23:59:59", "2026-06-11T00:00", 24),
                Arguments.of("February (28 days)", CalendarWindow.Unit.MONTH, "2026-02-28T23:59", "2026-03-01T00:00", 28 * 24),
                Arguments.of("January (31 days)", CalendarWindow.Unit.MONTH, "2026-01-31T12:00", "2026-02-01T00:00", 31 * 24),
                Arguments.of("March (31 days less an hour)", CalendarWindow.Unit.MONTH, "2026-03-31T23:00", "2026-04-01T00:00",
                        31 * 24 - 1),
                Arguments.of("ISO week (Sunday to Monday)", CalendarWindow.Unit.WEEK, "2026-10-25T22:00", "2026-10-26T00:00",
                        7 * 24 + 1));
    }

    /**
     * The quota is spent within the period, refused until its local end with the announced
     * retry-after and effective window, and whole again at the end: not an hour early or late on
     * a daylight-saving day, not on the 31st of a 28-day month.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("periods")
    void theQuotaLastsUntilThePeriodsLocalEnd(String name, CalendarWindow.Unit unit, String inside, String end,
                                              int hours) {
        Rule rule = calendar("cal", 3, unit);
        long now = at(inside);
        long ends = at(end);
        assertThat(rule.quotaWindow(now)).as("the period's length").isEqualTo(Duration.ofHours(hours));
        clock.set(now);
        for (int i = 0; i < 3; i++) {
            Decision taken = limiter.acquire(rule, "k");
            assertThat(taken.allowed()).as("unit %d", i + 1).isTrue();
            assertThat(taken.resetAfter()).isEqualTo(Duration.ofMillis(ends - now));
        }
        Decision refused = limiter.acquire(rule, "k");
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).as("until the local end").isEqualTo(Duration.ofMillis(ends - now));
        assertThat(refused.effectiveWindow()).isEqualTo(Duration.ofMillis(ends - now));
        clock.set(ends - 1);
        assertThat(limiter.acquire(rule, "k").allowed()).as("1 ms before the end").isFalse();
        clock.set(ends);
        Decision next = limiter.acquire(rule, "k");
        assertThat(next.allowed()).as("at the end").isTrue();
        assertThat(next.remaining()).isEqualTo(2);
        assertThat(next.resetAfter()).as("the next period").isEqualTo(rule.quotaWindow(ends));
    }

    /** With nothing counted, the effective window is what is left of the current period. */
    @Test
    void anUntouchedKeySeesTheRestOfThePeriod() {
        Rule rule = calendar("cal", 5, CalendarWindow.Unit.DAY);
        clock.set(at("2026-10-25T01:00"));
        Decision peek = limiter.peek(rule, "fresh", 1);
        assertThat(peek.remaining()).isEqualTo(5);
        // 01:00 CEST to midnight CET: 24 hours on the day of 25.
        assertThat(peek.effectiveWindow()).isEqualTo(Duration.ofHours(24));
    }

    /**
     * Rolling to calendar: units taken under {@code 1h} still count under the day, and weigh
     * until their own hour ends; a new unit then moves the count to the day's end.
     */
    @Test
    void anEditFromARollingWindowKeepsTheUnitsUntilTheirOwnEnd() {
        Rule hourly = Rule.of("edit", Algorithm.FIXED_WINDOW, 3, Duration.ofHours(1));
        clock.set(at("2026-06-10T10:15"));
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.acquire(hourly, "k").allowed()).isTrue();
        }
        Rule daily = calendar("edit", 5, CalendarWindow.Unit.DAY);
        Decision after = limiter.acquire(daily, "k");
        assertThat(after.allowed()).isTrue();
        assertThat(after.remaining()).as("the three hourly units count").isEqualTo(1);
        assertThat(after.resetAfter()).as("moved to the day's end by the new unit")
                .isEqualTo(Duration.ofMillis(at("2026-06-11T00:00") - at("2026-06-10T10:15")));
    }

    /**
     * Calendar to rolling: a day's exhausted count blocks the hourly rule no longer than the
     * day would have (never longer than the old state justifies), and the units count.
     */
    @Test
    void anEditToARollingWindowBlocksNoLongerThanThePeriod() {
        Rule daily = calendar("edit", 3, CalendarWindow.Unit.DAY);
        clock.set(at("2026-03-29T22:00"));
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.acquire(daily, "k").allowed()).isTrue();
        }
        Rule hourly = Rule.of("edit", Algorithm.FIXED_WINDOW, 3, Duration.ofHours(1));
        Decision refused = limiter.acquire(hourly, "k");
        assertThat(refused.allowed()).as("the day's units count").isFalse();
        assertThat(refused.retryAfter()).as("until the day ends, no later")
                .isLessThanOrEqualTo(Duration.ofHours(2));
        clock.set(at("2026-03-30T00:00"));
        assertThat(limiter.acquire(hourly, "k").allowed()).as("at the day's end").isTrue();
    }

    /** The promise of t on a calendar window after an edit from a rolling one, with units left. */
    @Test
    void theEffectiveWindowHoldsAfterAnEditToACalendar() {
        Rule minute = Rule.of("edit", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        clock.set(at("2026-10-25T23:59:30"));
        assertThat(limiter.acquire(minute, "k", 4).allowed()).isTrue();
        Rule daily = calendar("edit", 10, CalendarWindow.Unit.DAY);
        clock.advance(300);
        RateLimiterContract.assertTheEffectiveWindowHolds(limiter, clock, daily, "k", limiter.peek(daily, "k", 1));
    }
}
