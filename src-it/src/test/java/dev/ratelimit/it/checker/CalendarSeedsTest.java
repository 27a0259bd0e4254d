package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the fixed seeds of {@link CheckerTest} draw of calendar windows ({@link Calendars}). */
class CalendarSeedsTest {

    /**
     * The fixed seeds hold calendar windows: fixed-window rules that are calendar periods, whose
     * runs start shortly before a period end the steps cross, and edits between rolling and
     * calendar windows, both ways.
     */
    @Test
    void theFixedSeedsCrossCalendarPeriodEnds() {
        int calendars = 0;
        int toCalendar = 0;
        int toRolling = 0;
        for (long seed : CheckerTest.SEEDS) {
            for (Workload.Target target : Workload.Target.SINGLE) {
                if (Workload.serverClock(seed, target)) {
                    continue; // on the wall clock: no period end is near
                }
                Workload workload = Workload.generate(seed, target, CheckerTest.STEPS, Known.avoided());
                Rule calendar = workload.rules().stream().filter(r -> r.calendar() != null).findFirst()
                        .orElse(null);
                if (calendar == null) {
                    continue;
                }
                calendars++;
                System.out.println("checker: seed " + seed + " on " + target + ": " + calendar.name() + " per "
                        + calendar.calendar());
                assertThat(calendar.calendar().period(workload.clockStart()).end() - workload.clockStart())
                        .as("seed %d on %s starts before a period end", seed, target).isBetween(1L, 120_000L);
                for (Op step : workload.steps()) {
                    if (step instanceof Op.Edit edit && workload.rules().get(edit.rule()).algorithm()
                            == Algorithm.FIXED_WINDOW) {
                        if (edit.calendar() != null) {
                            toCalendar++;
                        } else {
                            toRolling++;
                        }
                    }
                }
            }
        }
        System.out.println("checker: " + calendars + " fixed-seed runs with a calendar window, " + toCalendar
                + " fixed-window edits to a calendar window, " + toRolling + " to a rolling one");
        assertThat(calendars).as("runs with a calendar window").isGreaterThanOrEqualTo(3);
        assertThat(toCalendar).as("edits to a calendar window").isPositive();
        assertThat(toRolling).as("edits to a rolling window").isPositive();
    }


    /** Over HTTP too: fixed seeds whose settings hold a calendar window (own or plan), or edits to one. */
    @Test
    void theHttpSeedsSetCalendarWindows() {
        int calendars = 0;
        int edits = 0;
        // The fixed seeds of HttpCheckerTest#fixedSeedsKeepEveryPromise.
        for (long seed : new long[] {1, 2, 3}) {
            HttpWorkload workload = HttpWorkload.generate(seed, HttpCheckerTest.STEPS, Known.avoided());
            calendars += (int) workload.rules().stream()
                    .filter(spec -> spec.rule().calendar() != null || spec.pro().calendar() != null).count();
            edits += (int) workload.steps().stream()
                    .filter(step -> step instanceof HttpWorkload.Edit edit && edit.calendar() != null).count();
        }
        System.out.println("checker: HTTP fixed seeds: " + calendars + " rules with a calendar window, " + edits
                + " edits to one");
        assertThat(calendars + edits).as("calendar windows over HTTP").isPositive();
    }
}
