package dev.ratelimit.config;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A rule's local lease ({@code local-lease}, {@code local-lease-time}): how many units an
 * instance may take ahead per key, checked against the rule and each of its plans so that a
 * lease can always be taken beside a request.
 */
final class LocalLeaseReader {

    /** How long a local lease serves by default before its unused units go back. */
    static final Duration DEFAULT_TIME = Duration.ofMillis(100);

    /**
     * A rule's local lease.
     *
     * @param size the most units taken ahead per key; 0: no lease
     * @param time how long a lease serves
     */
    record Lease(long size, Duration time) {
    }

    private final SettingsValues values;

    LocalLeaseReader(SettingsValues values) {
        this.values = values;
    }

    Lease read(String p, Rule rule, long cost, Collection<Rule> plans, boolean countsByOutcome) {
        long size = values.number(p + "local-lease", 0, 0, Long.MAX_VALUE);
        Duration time = values.duration(p + "local-lease-time", DEFAULT_TIME, Duration.ofMillis(1));
        if (size == 0) {
            values.raw(p + "local-lease-time").ifPresent(v -> values.problem(p + "local-lease-time", v,
                    "applies only with " + p + "local-lease"));
            return new Lease(0, time);
        }
        String text = Long.toString(size);
        Algorithm algorithm = rule.algorithm();
        if (algorithm != Algorithm.FIXED_WINDOW && algorithm != Algorithm.TOKEN_BUCKET && algorithm != Algorithm.GCRA) {
            values.problem(p + "local-lease", text, "applies only to fixed-window, token-bucket and gcra, not to "
                    + algorithm.id());
        } else if (rule.countRejected()) {
            values.problem(p + "local-lease", text, "cannot be set with count-rejected: a lease's call that is refused "
                    + "would count the attempt, and the request asked again alone would count it twice");
        } else if (rule.shadow()) {
            values.problem(p + "local-lease", text, "does not apply to a shadow rule, which only observes");
        } else if (countsByOutcome) {
            values.problem(p + "local-lease", text, "cannot be set with count-when or refund-when: those requests "
                    + "take their units by reservation, from Valkey, to give them back exactly");
        } else {
            List<Rule> all = new ArrayList<>(plans);
            all.add(0, rule);
            for (Rule each : all) {
                String problem = fits(each, size, time, cost);
                if (problem != null) {
                    values.problem(p + "local-lease", text, problem);
                    break;
                }
            }
        }
        return new Lease(size, time);
    }

    /** Why a lease of {@code size} cannot be taken beside a request of the rule, or null. */
    private static String fits(Rule rule, long size, Duration time, long cost) {
        String of = rule.limit() + " per " + (rule.calendar() != null ? rule.calendar() : Durations.format(rule.window()));
        if (rule.algorithm() == Algorithm.FIXED_WINDOW) {
            if (time.compareTo(rule.window()) >= 0) {
                return "with local-lease-time " + Durations.format(time) + " must be shorter than the window ("
                        + of + ")";
            }
            // Compared by subtraction: a size near Long.MAX_VALUE plus the cost would overflow.
            return size > rule.limit() - cost ? "plus the cost (" + cost + ") must not exceed the limit (" + of + ")"
                    : null;
        }
        long window = rule.window().toMillis();
        long margin = margin(time, rule);
        if (margin > rule.burst() - cost || size > rule.burst() - cost - margin) {
            return "plus the cost (" + cost + ") and the refill during local-lease-time " + Durations.format(time)
                    + " (" + margin + " units at " + of + ", charged with each lease) must not exceed the burst ("
                    + rule.burst() + ")";
        }
        return null;
    }

    /**
     * The refill during a lease, rounded up, as the limiter charges it; Long.MAX_VALUE when it
     * overflows a long (a long lease time at a high rate), which no burst holds.
     */
    private static long margin(Duration time, Rule rule) {
        long window = rule.window().toMillis();
        try {
            return Math.addExact(Math.multiplyExact(time.toMillis(), rule.limit()), window - 1) / window;
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
