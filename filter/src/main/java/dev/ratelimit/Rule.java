package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One limit: at most {@code limit} units per {@code window} for each key, decided by one
 * algorithm. Immutable; build one with {@link #of} and adjust it with the {@code with…}
 * methods.
 *
 * @param name          the rule's name: part of every state key and of the response headers;
 *                      letters, digits, {@code .}, {@code _} and {@code -}, at most 64 characters
 * @param algorithm     how the limit is enforced
 * @param limit         units allowed per window, at least 1; at most
 *                      {@value #MAX_SLIDING_LOG_LIMIT} for {@link Algorithm#SLIDING_LOG} and
 *                      {@link Algorithm#CONCURRENCY} (units in progress at once)
 * @param window        the window (for the token bucket and GCRA: the time in which
 *                      {@code limit} units are refilled; for {@link Algorithm#CONCURRENCY} the
 *                      lease timeout), a whole number of milliseconds, at least 1 ms
 * @param burst         for {@link Algorithm#TOKEN_BUCKET} and {@link Algorithm#GCRA}: how many
 *                      units may be taken at once (the bucket's capacity); for the others it
 *                      always equals {@code limit}. Default: {@code limit}
 * @param countRejected whether a rejected request still consumes (keeps a client that goes on
 *                      hammering locked out) instead of only accepted ones counting; not for
 *                      {@link Algorithm#CONCURRENCY}, where a rejected request holds nothing.
 *                      Default: false
 * @param shadow        whether the rule only observes: it counts and reports as usual but its
 *                      rejections never reject a request nor stop other rules from consuming
 *                      (for a safe roll-out). Default: false
 * @param calendar      for {@link Algorithm#FIXED_WINDOW} only: the calendar period the windows
 *                      are (a day, week or month in a time zone), or null for windows of
 *                      {@code window} aligned to the epoch. A calendar rule's {@code window} is
 *                      its period's {@linkplain CalendarWindow#nominal() nominal length}; its
 *                      decisions use the actual period. Default: null
 */
public record Rule(String name, Algorithm algorithm, long limit, Duration window, long burst,
                   boolean countRejected, boolean shadow, CalendarWindow calendar) {

    /** The rule names accepted: safe inside a Valkey key and a Structured Field string. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /**
     * The scripts compute in exact integers on doubles (53 bits); {@code max(limit, burst) ×
     * window in ms} is their largest product and is held below 2^50 to leave room for sums
     * (e.g. 1,000,000 units per day is allowed: 8.64 × 10^13; a billion per day is not).
     */
    static final long MAX_PRODUCT = 1L << 50;

    /**
     * The largest limit or burst: the quota and the units remaining are sent as Structured Field
     * Integers (RFC 9651 §3.3.1), which have at most 15 digits. Only a window under a few
     * milliseconds lets {@link #MAX_PRODUCT} allow more.
     */
    static final long MAX_UNITS = 999_999_999_999_999L;

    /**
     * The largest limit of a {@link Algorithm#SLIDING_LOG} rule. Its state holds one entry per
     * unit in the window, and one call may add up to {@code limit} of them: past ten thousand
     * a single call would hold the server for milliseconds and a single key take megabytes. A
     * higher limit wants a counting algorithm.
     */
    public static final long MAX_SLIDING_LOG_LIMIT = 10_000;

    /**
     * Validates every component.
     *
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     * @throws NullPointerException     if name, algorithm or window is null
     */
    public Rule {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(algorithm, "algorithm");
        Objects.requireNonNull(window, "window");
        if (!isValidName(name)) {
            throw new IllegalArgumentException("rule name '" + name
                    + "' is invalid: use 1 to 64 letters, digits, '.', '_' or '-'");
        }
        if (limit < 1) {
            throw new IllegalArgumentException("rule '" + name + "': limit " + limit + " must be at least 1");
        }
        if (window.isNegative() || window.isZero() || window.getNano() % 1_000_000 != 0
                || window.getSeconds() > Long.MAX_VALUE / 1_000 - 1) {
            throw new IllegalArgumentException("rule '" + name + "': window " + window
                    + " must be a positive whole number of milliseconds");
        }
        if (algorithm == Algorithm.SLIDING_LOG && limit > MAX_SLIDING_LOG_LIMIT) {
            throw new IllegalArgumentException("rule '" + name + "': limit " + limit + " is too large for "
                    + "sliding-log, which keeps one entry per unit: at most " + MAX_SLIDING_LOG_LIMIT
                    + " (use sliding-window-counter, token-bucket or gcra for higher limits)");
        }
        if (algorithm == Algorithm.CONCURRENCY && limit > MAX_SLIDING_LOG_LIMIT) {
            throw new IllegalArgumentException("rule '" + name + "': limit " + limit + " is too large for "
                    + "concurrency, which keeps one lease per unit in progress: at most " + MAX_SLIDING_LOG_LIMIT);
        }
        if (algorithm == Algorithm.CONCURRENCY && countRejected) {
            throw new IllegalArgumentException("rule '" + name + "': count-rejected does not apply to concurrency: "
                    + "a rejected request holds no lease");
        }
        if (!algorithm.hasBurst() && burst != limit) {
            throw new IllegalArgumentException("rule '" + name + "': burst " + burst
                    + " applies only to token-bucket and gcra, not to " + algorithm);
        }
        if (burst < 1) {
            throw new IllegalArgumentException("rule '" + name + "': burst " + burst + " must be at least 1");
        }
        long largest = Math.max(limit, burst);
        if (largest > MAX_UNITS) {
            throw new IllegalArgumentException("rule '" + name + "': " + (limit >= burst ? "limit " : "burst ")
                    + largest + " is too large: at most " + MAX_UNITS + ", the largest number a rate-limit "
                    + "header field carries (a Structured Field Integer has 15 digits)");
        }
        if (calendar != null && algorithm != Algorithm.FIXED_WINDOW) {
            throw new IllegalArgumentException("rule '" + name + "': window " + calendar.unit().id() + " applies only "
                    + "to fixed-window, not to " + algorithm + ": its rate is not defined over periods of varying length");
        }
        if (calendar != null && !window.equals(calendar.nominal())) {
            throw new IllegalArgumentException("rule '" + name + "': window " + window + " must be the nominal length "
                    + calendar.nominal() + " of its " + calendar);
        }
        if (largest > MAX_PRODUCT / window.toMillis()) {
            throw new IllegalArgumentException("rule '" + name + "': " + largest + " units per "
                    + window.toMillis() + " ms is too large: max(limit, burst) × window in ms must stay below 2^50 "
                    + "for the exact integer arithmetic of the scripts");
        }
    }

    /**
     * A rule without a calendar window: windows of {@code window} aligned to the epoch.
     *
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public Rule(String name, Algorithm algorithm, long limit, Duration window, long burst, boolean countRejected,
                boolean shadow) {
        this(name, algorithm, limit, window, burst, countRejected, shadow, null);
    }

    /**
     * Whether a text is a valid rule name.
     *
     * @param name any text
     * @return true for 1 to 64 letters, digits, {@code .}, {@code _} or {@code -}
     */
    public static boolean isValidName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    /**
     * A rule with the burst equal to the limit and rejected requests not counted.
     *
     * @param name      the rule's name (see {@link Rule})
     * @param algorithm how the limit is enforced
     * @param limit     units allowed per window, at least 1
     * @param window    the window, a positive whole number of milliseconds
     * @return the rule
     * @throws IllegalArgumentException naming the bad value
     */
    public static Rule of(String name, Algorithm algorithm, long limit, Duration window) {
        return new Rule(name, algorithm, limit, window, limit, false, false);
    }

    /**
     * This rule with another burst (bucket capacity).
     *
     * @param burst units that may be taken at once, at least 1
     * @return a new rule
     * @throws IllegalArgumentException if the algorithm has no burst or the value is below 1
     */
    public Rule withBurst(long burst) {
        return new Rule(name, algorithm, limit, window, burst, countRejected, shadow, calendar);
    }

    /**
     * This rule with its windows the periods of a calendar, its window their nominal length;
     * or, for null, windows of the nominal length aligned to the epoch.
     *
     * @param calendar the calendar window, or null
     * @return a new rule
     * @throws IllegalArgumentException if the algorithm is not {@link Algorithm#FIXED_WINDOW}
     */
    public Rule withCalendar(CalendarWindow calendar) {
        return new Rule(name, algorithm, limit, calendar == null ? window : calendar.nominal(), burst, countRejected,
                shadow, calendar);
    }

    /**
     * This rule with rejected requests counted or not.
     *
     * @param countRejected whether rejected requests consume too
     * @return a new rule
     */
    public Rule withCountRejected(boolean countRejected) {
        return new Rule(name, algorithm, limit, window, burst, countRejected, shadow, calendar);
    }

    /**
     * This rule in shadow mode or not.
     *
     * @param shadow whether the rule only observes and never rejects
     * @return a new rule
     */
    public Rule withShadow(boolean shadow) {
        return new Rule(name, algorithm, limit, window, burst, countRejected, shadow, calendar);
    }

    /**
     * The most units one request can ever take: the burst for the token bucket and GCRA, the
     * limit otherwise. A larger cost could never be allowed and is refused up front.
     *
     * @return the largest acceptable cost
     */
    public long capacity() {
        return algorithm.hasBurst() ? burst : limit;
    }

    /**
     * The time in which this rule restores its whole {@link #capacity()} at its rate: its window
     * (for a calendar window the current period on this machine's clock, see
     * {@link #quotaWindow(long)}), or {@code burst × window / limit} (rounded up to the millisecond) for a token bucket or
     * GCRA whose burst differs from its limit. The {@code w} of the {@code RateLimit-Policy}
     * field, and a full quota's effective window.
     *
     * @return the window of the whole quota
     */
    public Duration quotaWindow() {
        return quotaWindow(System.currentTimeMillis());
    }

    /**
     * {@link #quotaWindow()} at a given time: for a calendar window, the length of the period
     * that contains it (a day of 23, 24 or 25 hours, a month of 28 to 31 days).
     *
     * @param nowMillis epoch milliseconds
     * @return the window of the whole quota
     */
    public Duration quotaWindow(long nowMillis) {
        if (calendar != null) {
            return calendar.period(nowMillis).length();
        }
        if (!algorithm.hasBurst() || burst == limit) {
            return window;
        }
        // burst × window fits: the rule's own bound keeps max(limit, burst) × window below 2^50.
        long millis = burst * window.toMillis();
        return Duration.ofMillis(millis / limit + (millis % limit == 0 ? 0 : 1));
    }

    /**
     * Checks a cost against this rule.
     *
     * @param cost units a request wants to take
     * @throws IllegalArgumentException if the cost is below 1 or above {@link #capacity()}
     */
    public void checkCost(long cost) {
        if (cost < 1 || cost > capacity()) {
            throw new IllegalArgumentException("rule '" + name + "': cost " + cost
                    + " must be between 1 and " + capacity() + " (a larger cost could never be allowed)");
        }
    }
}
