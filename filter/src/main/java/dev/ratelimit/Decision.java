package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;

/**
 * The answer of one rule for one key. Immutable and thread-safe. Limiters make them; a
 * {@link RateLimiter} of one's own (a fake in a test) makes them with {@link #builder}.
 *
 * <p>The numbers mean the same for every algorithm:
 * <ul>
 *   <li>{@code remaining}: whole units that could still be taken right now, never negative;</li>
 *   <li>{@code effectiveWindow}: the time within which no more than {@code remaining} units can
 *       be taken, that is until more quota is made available (the {@code t} of the IETF
 *       {@code RateLimit} field, draft-11): the end of a fixed window; when the oldest counted
 *       entry of a sliding log leaves it; when a token bucket or GCRA has the next unit; when a
 *       sliding window counter's estimate has dropped by a unit; when the next lease of a
 *       concurrency rule times out at the latest. With the quota full, more cannot come: the
 *       time the rule takes to restore its whole quota at its rate (its window for most rules;
 *       zero for a concurrency rule, whose quota has no window);</li>
 *   <li>{@code resetAfter}: the time until the quota is fully restored if nothing more
 *       arrives;</li>
 *   <li>{@code retryAfter}: zero when allowed; otherwise the time until a request of the same
 *       cost would be allowed, rounded up, never early. Never before the effective window
 *       ends: the request needs more than {@code remaining}. (By a rule with a
 *       {@link Rule#maxDelay()}, allowed for a slot up to that much later: the retry-after is
 *       then never before the effective window less the max delay.)</li>
 *   <li>{@code delay}: zero, or for a request a rule with a {@link Rule#maxDelay()} allowed
 *       for a slot to come, the time until that slot (see {@link #delay()}).</li>
 * </ul>
 *
 * <p>Its parts: {@linkplain #ruleName() the rule's name}, {@linkplain #allowed() whether it
 * allows}, {@linkplain #limit() limit}, {@linkplain #remaining() remaining},
 * {@linkplain #effectiveWindow() effective window}, {@linkplain #resetAfter() reset after},
 * {@linkplain #retryAfter() retry after} and {@linkplain #basis() basis}.
 */
public final class Decision {

    /** What a decision rests on. */
    public enum Basis {
        /** The shared store decided (or the deny cache replayed what it decided moments ago). */
        SHARED,
        /** The store could not decide; the in-process limiter did, at the rule's local limit. */
        LOCAL,
        /**
         * Not decided, and nothing was counted: the store could not decide and the rule's policy
         * lets the request pass, or another rule of the request rejected it from the deny cache
         * or by a closed policy. The numbers say nothing.
         */
        SKIPPED,
        /** The store could not decide and the rule's policy refuses the request (503, not 429). */
        UNAVAILABLE
    }

    private final String ruleName;
    private final boolean allowed;
    private final long limit;
    private final long remaining;
    private final Duration effectiveWindow;
    private final Duration resetAfter;
    private final Duration retryAfter;
    private final Duration delay;
    private final Basis basis;

    private Decision(Builder b) {
        String rule = Objects.requireNonNull(b.ruleName, "ruleName");
        Objects.requireNonNull(b.resetAfter, "resetAfter");
        Objects.requireNonNull(b.retryAfter, "retryAfter");
        Objects.requireNonNull(b.basis, "basis");
        Objects.requireNonNull(b.delay, "delay");
        Duration effective = b.effectiveWindow != null ? b.effectiveWindow
                : defaultEffectiveWindow(b.resetAfter, b.retryAfter);
        if (b.remaining < 0 || b.limit < 1 || effective.isNegative() || b.resetAfter.isNegative()
                || b.retryAfter.isNegative()) {
            throw new IllegalArgumentException("invalid decision for rule '" + rule + "': limit " + b.limit
                    + ", remaining " + b.remaining + ", effective window " + effective + ", reset after "
                    + b.resetAfter + ", retry after " + b.retryAfter);
        }
        if (b.delay.isNegative() || !b.delay.isZero() && !b.retryAfter.isZero()) {
            throw new IllegalArgumentException("invalid decision for rule '" + rule + "': delay " + b.delay
                    + " with retry after " + b.retryAfter + " (only an allowed decision is delayed, never by less than zero)");
        }
        if (b.basis == Basis.UNAVAILABLE && b.retryAfter.isZero()) {
            throw new IllegalArgumentException("invalid decision for rule '" + rule
                    + "': unavailable with no retry after");
        }
        this.ruleName = rule;
        this.allowed = b.retryAfter.isZero();
        this.limit = b.limit;
        this.remaining = b.remaining;
        this.effectiveWindow = effective;
        this.resetAfter = b.resetAfter;
        this.retryAfter = b.retryAfter;
        this.delay = b.delay;
        this.basis = b.basis;
    }

    /**
     * A builder of a decision for a rule: allowed, with nothing remaining and every time zero,
     * decided by the shared store, until told otherwise.
     *
     * @param ruleName the name of the rule that decides
     * @param limit    the rule's limit, at least 1
     * @return a new builder
     */
    public static Builder builder(String ruleName, long limit) {
        return new Builder(ruleName, limit);
    }

    /**
     * A builder holding every part of this decision, to make one that differs in some. An
     * effective window that was the default (see {@link Builder#effectiveWindow}) is held as the
     * default, so that it follows a new reset or retry after; one of its own stays.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder(ruleName, limit).remaining(remaining).resetAfter(resetAfter).retryAfter(retryAfter)
                .delay(delay).basis(basis);
        if (!effectiveWindow.equals(defaultEffectiveWindow(resetAfter, retryAfter))) {
            b.effectiveWindow = effectiveWindow;
        }
        return b;
    }

    /** Allowed: the reset after; rejected: the shorter of reset after and retry after. */
    private static Duration defaultEffectiveWindow(Duration resetAfter, Duration retryAfter) {
        return retryAfter.isZero() || resetAfter.compareTo(retryAfter) < 0 ? resetAfter : retryAfter;
    }

    /**
     * The name of the rule that decided ({@link Rule#name()}).
     *
     * @return the rule's name
     */
    public String ruleName() {
        return ruleName;
    }

    /**
     * Whether this rule lets the request through.
     *
     * @return true if allowed
     */
    public boolean allowed() {
        return allowed;
    }

    /**
     * The rule's limit (units per window).
     *
     * @return the limit
     */
    public long limit() {
        return limit;
    }

    /**
     * Units left now: whole units that could still be taken right now, never negative.
     *
     * @return the units remaining
     */
    public long remaining() {
        return remaining;
    }

    /**
     * The time within which no more than {@link #remaining()} units can be taken (the
     * {@code t} of the {@code RateLimit} field); see the type's description.
     *
     * @return the effective window
     */
    public Duration effectiveWindow() {
        return effectiveWindow;
    }

    /**
     * The time until the quota is full again if nothing more arrives.
     *
     * @return the time until reset
     */
    public Duration resetAfter() {
        return resetAfter;
    }

    /**
     * Zero when allowed; otherwise the time until a request of the same cost would be allowed,
     * rounded up, never early.
     *
     * @return the time to wait
     */
    public Duration retryAfter() {
        return retryAfter;
    }

    /**
     * How long after the decision its slot comes: zero for a request allowed now (and for every
     * rejection); positive for one a rule with a {@link Rule#maxDelay()} allowed for a slot to
     * come, its units taken already (if another rule of the request rejected it, the slot this
     * rule would have given: nothing was taken, and {@link Decisions#delay()} is zero). The
     * action must not happen before then: the filter holds the request that long, without a
     * thread; a caller of the Java API waits (or schedules the work) itself, and
     * {@link Reservation#cancel()} gives the units back if it gives up (see there).
     *
     * @return the time until the request's slot, rounded up to the ms, never early
     */
    public Duration delay() {
        return delay;
    }

    /**
     * What decided: the shared store, the in-process fallback, or, when the store could not
     * decide, the rule's failure policy.
     *
     * @return the basis
     */
    public Basis basis() {
        return basis;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Decision d && ruleName.equals(d.ruleName) && allowed == d.allowed
                && limit == d.limit && remaining == d.remaining && effectiveWindow.equals(d.effectiveWindow)
                && resetAfter.equals(d.resetAfter) && retryAfter.equals(d.retryAfter) && delay.equals(d.delay)
                && basis == d.basis;
    }

    @Override
    public int hashCode() {
        return Objects.hash(ruleName, allowed, limit, remaining, effectiveWindow, resetAfter, retryAfter, delay, basis);
    }

    @Override
    public String toString() {
        return "Decision[rule=" + ruleName + ", allowed=" + allowed + ", limit=" + limit + ", remaining="
                + remaining + ", effectiveWindow=" + effectiveWindow + ", resetAfter=" + resetAfter
                + ", retryAfter=" + retryAfter + (delay.isZero() ? "" : ", delay=" + delay) + ", basis=" + basis + "]";
    }

    /** Builds a {@link Decision}; every part is checked by {@link #build()}. Not thread-safe. */
    public static final class Builder {

        private final String ruleName;
        private final long limit;
        private long remaining;
        private Duration effectiveWindow;
        private Duration resetAfter = Duration.ZERO;
        private Duration retryAfter = Duration.ZERO;
        private Duration delay = Duration.ZERO;
        private Basis basis = Basis.SHARED;

        private Builder(String ruleName, long limit) {
            this.ruleName = ruleName;
            this.limit = limit;
        }

        /**
         * Units left now (see {@link Decision#remaining()}); default 0.
         *
         * @param remaining not negative
         * @return this builder
         */
        public Builder remaining(long remaining) {
            this.remaining = remaining;
            return this;
        }

        /**
         * The time until the quota is full again (see {@link Decision#resetAfter()}); default zero.
         *
         * @param resetAfter not negative
         * @return this builder
         */
        public Builder resetAfter(Duration resetAfter) {
            this.resetAfter = resetAfter;
            return this;
        }

        /**
         * Zero (the default) allows; a positive time rejects, saying when a request of the same
         * cost would be allowed (see {@link Decision#retryAfter()}).
         *
         * @param retryAfter not negative
         * @return this builder
         */
        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
            return this;
        }

        /**
         * The effective window (see {@link Decision#effectiveWindow()}); default: the reset after
         * when allowed, the shorter of reset after and retry after when rejected.
         *
         * @param effectiveWindow not negative
         * @return this builder
         */
        public Builder effectiveWindow(Duration effectiveWindow) {
            this.effectiveWindow = Objects.requireNonNull(effectiveWindow, "effectiveWindow");
            return this;
        }

        /**
         * How long after the decision an allowed request's slot comes (see
         * {@link Decision#delay()}); default zero.
         *
         * @param delay not negative; positive only with a zero retry after
         * @return this builder
         */
        public Builder delay(Duration delay) {
            this.delay = delay;
            return this;
        }

        /**
         * What decided (see {@link Decision#basis()}); default {@link Basis#SHARED}.
         *
         * @param basis the basis
         * @return this builder
         */
        public Builder basis(Basis basis) {
            this.basis = basis;
            return this;
        }

        /**
         * The decision.
         *
         * @return the decision
         * @throws IllegalArgumentException if a number is negative, the limit below 1, an
         *                                  unavailable decision has no retry after, or a
         *                                  rejected one a delay
         */
        public Decision build() {
            return new Decision(this);
        }
    }
}
