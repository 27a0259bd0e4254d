package dev.ratelimit;

/**
 * Told about every decision and about the store coming and going, to bridge the limiter to a
 * metrics system (Micrometer, OpenTelemetry). Implementations must be thread-safe and fast:
 * they run on the request path.
 *
 * <p>The filter finds a listener in the servlet context attribute named by this interface's
 * class name, set before the filter starts (e.g. by a {@code ServletContextListener}).
 */
public interface RateLimitListener {

    /** What happened to one rule for one request. A 1.x release may add events. */
    enum Event {
        /** The rule allowed the request. */
        ALLOWED,
        /** The rule rejected the request (answered 429). */
        REJECTED,
        /** A shadow rule would have rejected the request; it was let through. */
        SHADOW_REJECTED,
        /** The store failed to answer for this rule. */
        STORE_ERROR,
        /** The rule's on-failure policy decided instead of the store. */
        FALLBACK,
        /** Units the rule took were given back after the work ({@link Reservation#cancel()}). */
        REFUNDED,
        /** Units the rule took were to be given back, but the store could not be reached: they stay counted. */
        REFUND_DROPPED,
        /**
         * The rejection was answered by the deny cache, without the store; reported as well as
         * {@link #REJECTED}, which counts every rejection.
         */
        DENY_CACHE_HIT,
        /**
         * The rule allowed the request with little of its quota left: at most
         * {@code 1 - near-limit-ratio} of it (by default, 80 % or more used). Reported as well as
         * {@link #ALLOWED}.
         */
        NEAR_LIMIT,
        /**
         * The rule admitted the request for a slot to come ({@link Rule#maxDelay()}): held that
         * long rather than rejected. Reported as well as {@link #ALLOWED}, with its wait told to
         * {@link RateLimitListener#onDelay}.
         */
        DELAYED,
        /**
         * The rule's units for an allowed request came whole from a local lease this instance
         * holds ({@code local-lease}), and the request made no call to Valkey for the rule, not
         * even one taking the next lease ahead. Reported as well as {@link #ALLOWED}: the share
         * of it this makes is the leases' hit rate.
         */
        LEASE_HIT,
        /**
         * Work the request did beyond what it reserved was counted after the fact
         * ({@link Reservation#commit(java.util.function.ToLongFunction)}, {@code cost-from}).
         */
        CHARGED,
        /**
         * Work counted after the fact was not counted in full: the store could not be reached
         * (a {@code local} policy's fallback counted it instead, where it has one), its reply was
         * lost (it may have been counted), or the key already owed all the debt it may.
         */
        CHARGE_DROPPED
    }

    /** A listener that ignores everything. */
    RateLimitListener NONE = new RateLimitListener() {
    };

    /**
     * One rule's event for one request.
     *
     * @param rule  the rule's name
     * @param event what happened
     */
    default void onEvent(String rule, Event event) {
    }

    /**
     * How long the store took to decide a request, once for each rule the call decided: the
     * decision latency, the call to Valkey included. Not told for answers of the deny cache or
     * of a failure policy.
     *
     * @param rule  the rule's name
     * @param nanos the time the call took, in nanoseconds
     */
    default void onDecisionTime(String rule, long nanos) {
    }

    /**
     * How long an allowed request waits for its slot ({@link Decision#delay()}), once for each
     * rule that delayed it ({@link Event#DELAYED}).
     *
     * @param rule  the rule's name
     * @param nanos the time until the request's slot, in nanoseconds
     */
    default void onDelay(String rule, long nanos) {
    }

    /**
     * The filter is being destroyed (the application undeployed): nothing more will be told. A
     * listener that registered something outside the application (meters in a shared
     * registry) removes it here.
     */
    default void onClose() {
    }

    /**
     * The circuit breaker in front of the store opened (calls stop) or closed (calls resume).
     *
     * @param open true when it opened
     */
    default void onBreakerChange(boolean open) {
    }
}
