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

    /** What happened to one rule for one request. */
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
        REFUND_DROPPED
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
     * The circuit breaker in front of the store opened (calls stop) or closed (calls resume).
     *
     * @param open true when it opened
     */
    default void onBreakerChange(boolean open) {
    }
}
