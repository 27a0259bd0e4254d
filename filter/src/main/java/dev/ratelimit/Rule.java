package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One limit: at most {@code limit} units per {@code window} for each key, decided by one
 * algorithm. Immutable and thread-safe; equal when every part is equal.
 *
 * <p>Made by the factory of its algorithm, which takes exactly what that algorithm uses, so a
 * part another algorithm would ignore cannot be written:
 * <pre>{@code
 * Rule api      = Rule.slidingWindowCounter("api", 100, Duration.ofMinutes(1));
 * Rule login    = Rule.fixedWindow("login", 5, Duration.ofMinutes(15)).withCountRejected(true);
 * Rule monthly  = Rule.fixedWindow("monthly", 10_000, CalendarWindow.month(ZoneId.of("Europe/Paris")));
 * Rule uploads  = Rule.tokenBucket("uploads", 10, Duration.ofSeconds(1), 50);
 * Rule reports  = Rule.concurrency("reports", 4, Duration.ofMinutes(5));
 * }</pre>
 * A rule whose algorithm is known only at run time (read from settings) is made by
 * {@link #of} or {@link #builder}, which check the same combinations when it is built.
 *
 * <p>Its parts: {@linkplain #name() name}, {@linkplain #algorithm() algorithm},
 * {@linkplain #limit() limit}, {@linkplain #window() window}, {@linkplain #burst() burst},
 * {@linkplain #countRejected() count-rejected}, {@linkplain #shadow() shadow},
 * {@linkplain #calendar() calendar} and {@linkplain #maxDelay() max delay}; each accessor says
 * what it means.
 */
public final class Rule {

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
     * How many times the time a bucket takes to refill from empty a {@link #maxDelay()} may be:
     * a delayed take puts the bucket into debt beyond its burst, and the scripts keep a debt of
     * at most eight buckets whole (one of them the burst itself).
     */
    static final long MAX_DELAY_BUCKETS = 7;

    private final String name;
    private final Algorithm algorithm;
    private final long limit;
    private final Duration window;
    private final long burst;
    private final boolean countRejected;
    private final boolean shadow;
    private final CalendarWindow calendar;
    private final Duration maxDelay;
    /** Computed once: a rule keys maps on every decision (leases, the deny cache). */
    private int hash;

    private Rule(String name, Algorithm algorithm, long limit, Duration window, long burst,
                 boolean countRejected, boolean shadow, CalendarWindow calendar, Duration maxDelay) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(algorithm, "algorithm");
        Objects.requireNonNull(window, "window");
        Objects.requireNonNull(maxDelay, "maxDelay");
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
        checkMaxDelay(name, algorithm, limit, window, burst, countRejected, shadow, maxDelay);
        this.name = name;
        this.algorithm = algorithm;
        this.limit = limit;
        this.window = window;
        this.burst = burst;
        this.countRejected = countRejected;
        this.shadow = shadow;
        this.calendar = calendar;
        this.maxDelay = maxDelay;
    }

    /**
     * A delay is a slot to come: only a bucket has slots at its rate (a window's next slot is
     * its next window, when every delayed request would pass at once). A delayed request is
     * allowed, so it cannot also count as rejected, nor only observe.
     */
    private static void checkMaxDelay(String name, Algorithm algorithm, long limit, Duration window, long burst,
                                      boolean countRejected, boolean shadow, Duration maxDelay) {
        if (maxDelay.isNegative() || maxDelay.getNano() % 1_000_000 != 0
                || maxDelay.getSeconds() > Long.MAX_VALUE / 1_000 - 1) {
            throw new IllegalArgumentException("rule '" + name + "': max delay " + maxDelay
                    + " must be zero or a positive whole number of milliseconds");
        }
        if (maxDelay.isZero()) {
            return;
        }
        if (!algorithm.hasBurst()) {
            throw new IllegalArgumentException("rule '" + name + "': max delay " + maxDelay
                    + " applies only to token-bucket and gcra, not to " + algorithm + ": only a bucket has slots "
                    + "at its rate (a window's next slot is its next window, where every delayed request would "
                    + "pass at once)");
        }
        if (countRejected) {
            throw new IllegalArgumentException("rule '" + name + "': max delay " + maxDelay
                    + " cannot be combined with count-rejected: a delayed request is allowed, not rejected");
        }
        if (shadow) {
            throw new IllegalArgumentException("rule '" + name + "': max delay " + maxDelay
                    + " cannot be combined with shadow: a shadow rule never holds a request back");
        }
        // burst × window < 2^50, so seven times it is an exact long.
        long longest = MAX_DELAY_BUCKETS * burst * window.toMillis() / limit;
        if (maxDelay.toMillis() > longest) {
            throw new IllegalArgumentException("rule '" + name + "': max delay " + maxDelay + " is too long: at most "
                    + longest + " ms, " + MAX_DELAY_BUCKETS + " times the time the bucket takes to fill from empty "
                    + "(the debt of the delayed requests is kept whole up to that)");
        }
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
     * A fixed window: at most {@code limit} units in each window of {@code window}, windows
     * aligned to the epoch (a window of a day resets at midnight UTC).
     *
     * @param name   the rule's name (see {@link #name()})
     * @param limit  units per window, at least 1
     * @param window the window, a positive whole number of milliseconds
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule fixedWindow(String name, long limit, Duration window) {
        return of(name, Algorithm.FIXED_WINDOW, limit, window);
    }

    /**
     * A fixed window over the periods of a calendar: at most {@code limit} units per day, week
     * or month in a time zone (a day of 23, 24 or 25 hours, a month of 28 to 31 days).
     *
     * @param name     the rule's name (see {@link #name()})
     * @param limit    units per period, at least 1
     * @param calendar the calendar period
     * @return the rule, its window the period's {@linkplain CalendarWindow#nominal() nominal length}
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule fixedWindow(String name, long limit, CalendarWindow calendar) {
        Objects.requireNonNull(calendar, "calendar");
        return builder(name, Algorithm.FIXED_WINDOW).limit(limit).calendar(calendar).build();
    }

    /**
     * A sliding log: at most {@code limit} units in any span of {@code window}, each unit
     * remembered until it leaves the window (exact; memory grows with the limit, at most
     * {@value #MAX_SLIDING_LOG_LIMIT}).
     *
     * @param name   the rule's name (see {@link #name()})
     * @param limit  units per window, 1 to {@value #MAX_SLIDING_LOG_LIMIT}
     * @param window the window, a positive whole number of milliseconds
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule slidingLog(String name, long limit, Duration window) {
        return of(name, Algorithm.SLIDING_LOG, limit, window);
    }

    /**
     * A sliding window counter: at most about {@code limit} units in any span of
     * {@code window}, estimated from this window's count and the previous one's (two numbers
     * per key, whatever the limit).
     *
     * @param name   the rule's name (see {@link #name()})
     * @param limit  units per window, at least 1
     * @param window the window, a positive whole number of milliseconds
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule slidingWindowCounter(String name, long limit, Duration window) {
        return of(name, Algorithm.SLIDING_WINDOW_COUNTER, limit, window);
    }

    /**
     * A token bucket refilled with {@code rate} units every {@code per}, holding at most
     * {@code rate} units.
     *
     * @param name the rule's name (see {@link #name()})
     * @param rate units refilled per {@code per}, at least 1
     * @param per  the time in which {@code rate} units are refilled
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule tokenBucket(String name, long rate, Duration per) {
        return tokenBucket(name, rate, per, rate);
    }

    /**
     * A token bucket refilled with {@code rate} units every {@code per}, holding at most
     * {@code burst} units (the most one client can take at once).
     *
     * @param name  the rule's name (see {@link #name()})
     * @param rate  units refilled per {@code per}, at least 1
     * @param per   the time in which {@code rate} units are refilled
     * @param burst the bucket's capacity, at least 1
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule tokenBucket(String name, long rate, Duration per, long burst) {
        return builder(name, Algorithm.TOKEN_BUCKET).limit(rate).window(per).burst(burst).build();
    }

    /**
     * GCRA (the generic cell rate algorithm): {@code rate} units every {@code per}, evenly
     * spaced, with a burst of {@code rate}; the token bucket's decisions in one number per key.
     *
     * @param name the rule's name (see {@link #name()})
     * @param rate units per {@code per}, at least 1
     * @param per  the time in which {@code rate} units are allowed
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule gcra(String name, long rate, Duration per) {
        return gcra(name, rate, per, rate);
    }

    /**
     * GCRA with a burst of its own: {@code rate} units every {@code per}, at most
     * {@code burst} at once.
     *
     * @param name  the rule's name (see {@link #name()})
     * @param rate  units per {@code per}, at least 1
     * @param per   the time in which {@code rate} units are allowed
     * @param burst the most units taken at once, at least 1
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule gcra(String name, long rate, Duration per, long burst) {
        return builder(name, Algorithm.GCRA).limit(rate).window(per).burst(burst).build();
    }

    /**
     * An in-flight limit: at most {@code limit} units of work in progress at once per key,
     * each unit a permit held until the work is settled or, if it never is, until
     * {@code permitTimeout}.
     *
     * @param name          the rule's name (see {@link #name()})
     * @param limit         units in progress at once, 1 to {@value #MAX_SLIDING_LOG_LIMIT}
     * @param permitTimeout how long a permit never released is held
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule concurrency(String name, long limit, Duration permitTimeout) {
        return of(name, Algorithm.CONCURRENCY, limit, permitTimeout);
    }

    /**
     * A rule whose algorithm is chosen at run time, its burst equal to its limit, rejected
     * requests not counted; the per-algorithm factories above are the typed way.
     *
     * @param name      the rule's name (see {@link #name()})
     * @param algorithm how the limit is enforced
     * @param limit     units allowed per window, at least 1
     * @param window    the window, a positive whole number of milliseconds (see {@link #window()})
     * @return the rule
     * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
     */
    public static Rule of(String name, Algorithm algorithm, long limit, Duration window) {
        return new Rule(name, algorithm, limit, window, limit, false, false, null, Duration.ZERO);
    }

    /**
     * A builder for a rule whose parts are read at run time (from settings, a plan, a database):
     * every combination is checked when {@link Builder#build()} is called.
     *
     * @param name      the rule's name (see {@link #name()})
     * @param algorithm how the limit is enforced
     * @return a new builder
     */
    public static Builder builder(String name, Algorithm algorithm) {
        return new Builder(name, algorithm);
    }

    /**
     * A builder holding every part of this rule, to make one that differs in some. A burst equal
     * to the limit is held as the default, so it follows a new limit; a burst of its own stays.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder builder = new Builder(name, algorithm).limit(limit).window(window).calendar(calendar)
                .countRejected(countRejected).shadow(shadow).maxDelay(maxDelay);
        return burst == limit ? builder : builder.burst(burst);
    }

    /**
     * This rule with rejected requests counted or not.
     *
     * @param countRejected whether rejected requests consume too (see {@link #countRejected()})
     * @return a new rule
     * @throws IllegalArgumentException for a concurrency rule, where a rejected request holds nothing
     */
    public Rule withCountRejected(boolean countRejected) {
        return new Rule(name, algorithm, limit, window, burst, countRejected, shadow, calendar, maxDelay);
    }

    /**
     * This rule in shadow mode or not.
     *
     * @param shadow whether the rule only observes and never rejects (see {@link #shadow()})
     * @return a new rule
     */
    public Rule withShadow(boolean shadow) {
        return new Rule(name, algorithm, limit, window, burst, countRejected, shadow, calendar, maxDelay);
    }

    /**
     * This rule admitting requests up to {@code maxDelay} ahead of their slot, or not (zero).
     *
     * @param maxDelay the longest a request is delayed rather than rejected (see {@link #maxDelay()})
     * @return a new rule
     * @throws IllegalArgumentException for a rule other than a token bucket or GCRA, one that
     *                                  counts rejections or is in shadow mode, or a delay too long
     */
    public Rule withMaxDelay(Duration maxDelay) {
        return new Rule(name, algorithm, limit, window, burst, countRejected, shadow, calendar, maxDelay);
    }

    /**
     * The rule's name: part of every state key and of the response headers; letters, digits,
     * {@code .}, {@code _} and {@code -}, at most 64 characters.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * How the limit is enforced.
     *
     * @return the algorithm
     */
    public Algorithm algorithm() {
        return algorithm;
    }

    /**
     * Units allowed per window, at least 1 (for the token bucket and GCRA: per refill time;
     * for {@link Algorithm#CONCURRENCY}: units in progress at once).
     *
     * @return the limit
     */
    public long limit() {
        return limit;
    }

    /**
     * The window, a whole number of milliseconds: for the token bucket and GCRA the time in
     * which {@link #limit()} units are refilled; for {@link Algorithm#CONCURRENCY} the permit
     * timeout; for a calendar rule its period's nominal length (its decisions use the actual
     * period).
     *
     * @return the window
     */
    public Duration window() {
        return window;
    }

    /**
     * For {@link Algorithm#TOKEN_BUCKET} and {@link Algorithm#GCRA}: how many units may be
     * taken at once (the bucket's capacity); for the others always {@link #limit()}.
     *
     * @return the burst
     */
    public long burst() {
        return burst;
    }

    /**
     * Whether a rejected request still consumes (keeps a client that goes on hammering locked
     * out) instead of only accepted ones counting; never for {@link Algorithm#CONCURRENCY}.
     *
     * @return whether rejected requests count
     */
    public boolean countRejected() {
        return countRejected;
    }

    /**
     * Whether the rule only observes: it counts and reports as usual but its rejections never
     * reject a request nor stop other rules from consuming (for a safe roll-out).
     *
     * @return whether the rule is in shadow mode
     */
    public boolean shadow() {
        return shadow;
    }

    /**
     * The longest a request is held back rather than rejected: a request the rule would reject
     * whose slot comes within this time is allowed now, for that slot, its units taken at once
     * (so the limit holds exactly across instances), and {@link Decision#delay()} says how long
     * it must wait; one whose slot is further away is rejected, its retry-after the time until
     * it would be delayed by no more than this. Zero (the default): nothing is delayed.
     *
     * <p>Token bucket and GCRA only (a bucket has a slot per unit at its rate), neither
     * counting rejections nor in shadow mode, and at most seven times the time the bucket takes
     * to fill from empty. Requests pass at the rule's rate, in order of arrival: nginx's
     * {@code limit_req} with {@code burst} and {@code delay}, across every instance.
     *
     * @return the longest delay; zero for none
     */
    public Duration maxDelay() {
        return maxDelay;
    }

    /**
     * For {@link Algorithm#FIXED_WINDOW} only: the calendar period the windows are (a day, week
     * or month in a time zone), or null for windows of {@link #window()} aligned to the epoch.
     *
     * @return the calendar window, or null
     */
    public CalendarWindow calendar() {
        return calendar;
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

    @Override
    public boolean equals(Object other) {
        return this == other || other instanceof Rule rule && hashCode() == rule.hashCode() && name.equals(rule.name) && algorithm == rule.algorithm
                && limit == rule.limit && window.equals(rule.window) && burst == rule.burst
                && countRejected == rule.countRejected && shadow == rule.shadow
                && Objects.equals(calendar, rule.calendar) && maxDelay.equals(rule.maxDelay);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            // Racy but safe: every thread computes the same value from final fields.
            h = Objects.hash(name, algorithm, limit, window, burst, countRejected, shadow, calendar, maxDelay);
            hash = h;
        }
        return h;
    }

    @Override
    public String toString() {
        return "Rule[name=" + name + ", algorithm=" + algorithm + ", limit=" + limit + ", window=" + window
                + ", burst=" + burst + ", countRejected=" + countRejected + ", shadow=" + shadow
                + ", calendar=" + calendar + (maxDelay.isZero() ? "" : ", maxDelay=" + maxDelay) + "]";
    }

    /**
     * Builds a {@link Rule} whose parts are known only at run time. Not thread-safe; the rule
     * it builds is.
     */
    public static final class Builder {

        private final String name;
        private final Algorithm algorithm;
        private long limit;
        private Duration window;
        private Long burst;
        private boolean countRejected;
        private boolean shadow;
        private CalendarWindow calendar;
        private Duration maxDelay = Duration.ZERO;

        private Builder(String name, Algorithm algorithm) {
            this.name = name;
            this.algorithm = algorithm;
        }

        /**
         * The limit (see {@link Rule#limit()}); required.
         *
         * @param limit units per window, at least 1
         * @return this builder
         */
        public Builder limit(long limit) {
            this.limit = limit;
            return this;
        }

        /**
         * The window (see {@link Rule#window()}); required unless a calendar is set, and
         * replaced by it.
         *
         * @param window a positive whole number of milliseconds
         * @return this builder
         */
        public Builder window(Duration window) {
            this.window = window;
            this.calendar = null;
            return this;
        }

        /**
         * The burst (see {@link Rule#burst()}); default: the limit.
         *
         * @param burst units taken at once, at least 1; only a token bucket's or GCRA's may
         *              differ from the limit
         * @return this builder
         */
        public Builder burst(long burst) {
            this.burst = burst;
            return this;
        }

        /**
         * The calendar period the windows are (see {@link Rule#calendar()}), for a fixed window
         * only; sets the window to its nominal length. Null (the default) keeps the window set,
         * aligned to the epoch.
         *
         * @param calendar the calendar window, or null
         * @return this builder
         */
        public Builder calendar(CalendarWindow calendar) {
            this.calendar = calendar;
            if (calendar != null) {
                this.window = calendar.nominal();
            }
            return this;
        }

        /**
         * Whether rejected requests count (see {@link Rule#countRejected()}); default false.
         *
         * @param countRejected whether rejected requests consume too
         * @return this builder
         */
        public Builder countRejected(boolean countRejected) {
            this.countRejected = countRejected;
            return this;
        }

        /**
         * Whether the rule only observes (see {@link Rule#shadow()}); default false.
         *
         * @param shadow whether the rule never rejects
         * @return this builder
         */
        public Builder shadow(boolean shadow) {
            this.shadow = shadow;
            return this;
        }

        /**
         * The longest a request is delayed rather than rejected (see {@link Rule#maxDelay()});
         * default zero, none.
         *
         * @param maxDelay zero or a positive whole number of milliseconds
         * @return this builder
         */
        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
            return this;
        }

        /**
         * The rule, every part checked.
         *
         * @return the rule
         * @throws IllegalArgumentException naming the rule, the bad value and the rule it breaks
         * @throws NullPointerException     if the name, algorithm or window is missing
         */
        public Rule build() {
            return new Rule(name, algorithm, limit, window, burst == null ? limit : burst, countRejected, shadow,
                    calendar, maxDelay);
        }
    }
}
