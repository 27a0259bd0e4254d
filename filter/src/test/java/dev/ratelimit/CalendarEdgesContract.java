package dev.ratelimit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calendar windows at their edges, beside the other features: odd zones (half-hour daylight
 * saving, days that skip midnight, a day a zone skipped, UTC+14, a leap February), costs above
 * one, {@code count-rejected}, a refund that arrives after its period ended, and an edit of the
 * zone in mid-period. The expected instants are written in UTC, not computed by the code under
 * test. The in-process limiter runs it in {@code filter/}, the Valkey limiter (client clock) in
 * {@code src-it/}.
 */
public abstract class CalendarEdgesContract extends ManualClockLimiterTest {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    @Override
    protected long startMillis() {
        return Instant.parse("2026-06-10T12:00:00Z").toEpochMilli();
    }

    private static long utc(String instant) {
        return Instant.parse(instant).toEpochMilli();
    }

    private static long local(String localTime, ZoneId zone) {
        return LocalDateTime.parse(localTime).atZone(zone).toInstant().toEpochMilli();
    }

    private static Rule rule(String name, long limit, CalendarWindow.Unit unit, ZoneId zone) {
        return Rule.of(name, Algorithm.FIXED_WINDOW, limit, Duration.ofDays(1)).toBuilder().calendar(CalendarWindow.of(unit, zone)).build();
    }

    /**
     * Periods whose length or start is odd: a zone, the unit, a UTC instant inside the period,
     * the UTC instant of its end, and its length in minutes.
     */
    static Stream<Arguments> oddPeriods() {
        return Stream.of(
                Arguments.of("Lord Howe, DST ends by half an hour", "Australia/Lord_Howe", CalendarWindow.Unit.DAY,
                        "2026-04-05T10:00:00Z", "2026-04-05T13:30:00Z", 24 * 60 + 30),
                Arguments.of("Lord Howe, DST starts by half an hour", "Australia/Lord_Howe", CalendarWindow.Unit.DAY,
                        "2026-10-04T10:00:00Z", "2026-10-04T13:00:00Z", 23 * 60 + 30),
                Arguments.of("Havana, the day after a skipped midnight", "America/Havana", CalendarWindow.Unit.DAY,
                        "2026-03-08T06:00:00Z", "2026-03-09T04:00:00Z", 23 * 60),
                Arguments.of("Havana, the day before a skipped midnight", "America/Havana", CalendarWindow.Unit.DAY,
                        "2026-03-08T04:59:59Z", "2026-03-08T05:00:00Z", 24 * 60),
                Arguments.of("Santiago, a day that starts at 01:00", "America/Santiago", CalendarWindow.Unit.DAY,
                        "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z", 23 * 60),
                Arguments.of("Apia, the day before the day it skipped", "Pacific/Apia", CalendarWindow.Unit.DAY,
                        "2011-12-30T09:59:00Z", "2011-12-30T10:00:00Z", 24 * 60),
                Arguments.of("Kiritimati (UTC+14), a month", "Pacific/Kiritimati", CalendarWindow.Unit.MONTH,
                        "2026-06-30T09:00:00Z", "2026-06-30T10:00:00Z", 30 * 24 * 60),
                Arguments.of("a leap February", "UTC", CalendarWindow.Unit.MONTH,
                        "2028-02-29T23:59:59Z", "2028-03-01T00:00:00Z", 29 * 24 * 60),
                Arguments.of("Kathmandu (+05:45), a week", "Asia/Kathmandu", CalendarWindow.Unit.WEEK,
                        "2026-06-14T18:14:59Z", "2026-06-14T18:15:00Z", 7 * 24 * 60));
    }

    /** The quota is spent in the odd period, refused until its end to the millisecond, whole after it. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("oddPeriods")
    void anOddPeriodEndsWhereItsZoneSays(String name, String zone, CalendarWindow.Unit unit, String inside,
                                         String end, long minutes) {
        Rule rule = rule("odd", 2, unit, ZoneId.of(zone));
        long now = utc(inside);
        long ends = utc(end);
        assertThat(rule.quotaWindow(now)).as("w").isEqualTo(Duration.ofMinutes(minutes));
        clock.set(now);
        assertThat(limiter.acquire(rule, "k", 2).allowed()).isTrue();
        Decision refused = limiter.acquire(rule, "k");
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(ends - now));
        clock.set(ends - 1);
        assertThat(limiter.acquire(rule, "k").allowed()).as("1 ms before the end").isFalse();
        clock.set(ends);
        Decision next = limiter.acquire(rule, "k");
        assertThat(next.allowed()).as("at the end").isTrue();
        assertThat(next.remaining()).isEqualTo(1);
        assertThat(next.resetAfter()).as("the next period is counted in full").isEqualTo(rule.quotaWindow(ends));
    }

    /**
     * A reservation taken in the last millisecond of a day and cancelled in the next day gives
     * nothing back: its unit was counted in a day that has ended, and the new day's count is
     * another's.
     */
    @Test
    void aRefundAfterThePeriodEndNeverLandsInTheNextPeriod() {
        Rule rule = rule("refund", 3, CalendarWindow.Unit.DAY, BERLIN);
        long end = local("2026-06-11T00:00", BERLIN);
        clock.set(end - 1);
        Reservation late = limiter.reserve(rule, "k", 2);
        assertThat(late.allowed()).isTrue();
        clock.set(end);
        Decision taken = limiter.acquire(rule, "k", 2);
        assertThat(taken.allowed()).isTrue();
        assertThat(taken.remaining()).isEqualTo(1);
        clock.advance(5);
        late.cancel();
        assertThat(limiter.peek(rule, "k", 1).remaining()).as("the new day keeps its 2 units").isEqualTo(1);
        assertThat(limiter.acquire(rule, "k", 2).allowed()).as("no room made by the old day's refund").isFalse();
    }

    /** A refund within the period gives its units back (the counterpart of the case above). */
    @Test
    void aRefundWithinThePeriodGivesItsUnitsBack() {
        Rule rule = rule("refund", 3, CalendarWindow.Unit.MONTH, BERLIN);
        clock.set(local("2026-02-28T23:59:59.998", BERLIN));
        Reservation reservation = limiter.reserve(rule, "k", 3);
        clock.advance(1);
        assertThat(reservation.cancel()).containsExactly("refund");
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(3);
    }

    /**
     * {@code count-rejected} hammering through the end of a 25-hour day: every attempt is
     * refused until the local midnight, announced exactly, and the new day is whole.
     */
    @Test
    void countRejectedHammeringEndsAtTheLocalMidnight() {
        Rule rule = rule("hammer", 2, CalendarWindow.Unit.DAY, BERLIN).withCountRejected(true);
        long end = local("2026-10-26T00:00", BERLIN);
        clock.set(end - 50);
        assertThat(limiter.acquire(rule, "k", 2).allowed()).isTrue();
        for (long t = end - 49; t < end; t += 7) {
            clock.set(t);
            Decision refused = limiter.acquire(rule, "k");
            assertThat(refused.allowed()).isFalse();
            assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(end - t));
        }
        clock.set(end);
        Decision fresh = limiter.acquire(rule, "k");
        assertThat(fresh.allowed()).isTrue();
        assertThat(fresh.remaining()).isEqualTo(1);
    }

    /** Costs above one fill a period exactly; a cost of the whole limit fits the next period. */
    @Test
    void costsAboveOneFillThePeriodExactly() {
        Rule rule = rule("costly", 10, CalendarWindow.Unit.WEEK, BERLIN);
        long end = local("2026-10-26T00:00", BERLIN);
        clock.set(end - 3_600_000);
        assertThat(limiter.acquire(rule, "k", 4).allowed()).isTrue();
        assertThat(limiter.acquire(rule, "k", 7).allowed()).isFalse();
        assertThat(limiter.acquire(rule, "k", 6).remaining()).isZero();
        Decision refused = limiter.acquire(rule, "k", 1);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofHours(1));
        clock.set(end);
        assertThat(limiter.acquire(rule, "k", 10).allowed()).isTrue();
    }

    /**
     * An edit of the zone in mid-period (Berlin's day to New York's, at 23:30 in Berlin): the
     * units taken count in full, a block lasts no longer than the Berlin day that wrote it, and
     * after it the New York day gives its limit, no more.
     */
    @Test
    void anEditOfTheZoneKeepsTheUnitsAndBlocksNoLongerThanTheOldPeriod() {
        ZoneId newYork = ZoneId.of("America/New_York");
        Rule berlin = rule("zone", 3, CalendarWindow.Unit.DAY, BERLIN);
        Rule york = rule("zone", 3, CalendarWindow.Unit.DAY, newYork);
        long berlinMidnight = local("2026-06-11T00:00", BERLIN);
        long yorkMidnight = local("2026-06-11T00:00", newYork);
        clock.set(berlinMidnight - 1_800_000);
        assertThat(limiter.acquire(berlin, "k", 3).allowed()).isTrue();
        Decision refused = limiter.acquire(york, "k");
        assertThat(refused.allowed()).as("the Berlin units count under New York's day").isFalse();
        assertThat(refused.retryAfter()).as("no longer than the Berlin day").isEqualTo(Duration.ofMinutes(30));
        clock.set(berlinMidnight);
        Decision after = limiter.acquire(york, "k", 3);
        assertThat(after.allowed()).isTrue();
        assertThat(after.resetAfter()).as("New York's day").isEqualTo(Duration.ofMillis(yorkMidnight - berlinMidnight));
        assertThat(limiter.acquire(york, "k").allowed()).as("no grant beyond the New York limit").isFalse();
    }

    /**
     * acquireAll of a calendar day and a rolling hour where the hour rejects: the day is left
     * untouched, and where it is count-rejected it records the attempt in its own period.
     */
    @Test
    void severalRulesDecideTogetherAcrossADaysEnd() {
        Rule day = rule("day", 5, CalendarWindow.Unit.DAY, ZoneId.of("Pacific/Kiritimati"));
        Rule hour = Rule.of("hour", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
        long end = utc("2026-06-10T10:00:00Z");
        clock.set(end - 1_000);
        assertThat(limiter.acquireAll(List.of(Claim.of(day, "k", 1), Claim.of(hour, "k", 1))).allowed()).isTrue();
        Decisions refused = limiter.acquireAll(List.of(Claim.of(day, "k", 1), Claim.of(hour, "k", 1)));
        assertThat(refused.allowed()).isFalse();
        assertThat(limiter.peek(day, "k", 1).remaining()).as("untouched by the rejection").isEqualTo(4);
        clock.set(end);
        Decisions next = limiter.acquireAll(List.of(Claim.of(day, "k", 1), Claim.of(hour, "k", 1)));
        assertThat(next.allowed()).isTrue();
        assertThat(limiter.peek(day, "k", 1).remaining()).as("a new day").isEqualTo(4);
    }
}
