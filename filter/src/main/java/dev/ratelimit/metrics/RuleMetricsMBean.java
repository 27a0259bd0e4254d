package dev.ratelimit.metrics;

/**
 * The JMX view of one rule, registered as {@code dev.ratelimit:type=RateLimiter,rule=<name>}.
 * Counters only grow, from the filter's start.
 */
public interface RuleMetricsMBean {

    /**
     * Requests the rule allowed.
     *
     * @return the count
     */
    long getAllowed();

    /**
     * Requests the rule rejected (answered 429), including those answered from the deny cache.
     *
     * @return the count
     */
    long getRejected();

    /**
     * Requests a shadow rule would have rejected.
     *
     * @return the count
     */
    long getShadowRejected();

    /**
     * Requests for which the store failed to answer.
     *
     * @return the count
     */
    long getStoreErrors();

    /**
     * Requests decided by the rule's on-failure policy instead of the store.
     *
     * @return the count
     */
    long getFallbackDecisions();

    /**
     * Rules' units given back after the response (a refund or an outcome that does not count).
     *
     * @return the count
     */
    long getRefunded();

    /**
     * Refunds dropped because the store could not be reached: those units stay counted.
     *
     * @return the count
     */
    long getRefundsDropped();

    /**
     * Rejections answered by the deny cache, without the store (also counted as rejected).
     *
     * @return the count
     */
    long getDenyCacheHits();

    /**
     * Allowed requests with little of the quota left (also counted as allowed).
     *
     * @return the count
     */
    long getNearLimit();

    /**
     * The mean time the store took to decide, in milliseconds, since start.
     *
     * @return the mean; 0 before the first decision
     */
    double getMeanDecisionMillis();

    /**
     * The longest the store took to decide, in milliseconds, since start.
     *
     * @return the slowest
     */
    double getSlowestDecisionMillis();

    /**
     * Whether the circuit breaker in front of the store is open now.
     *
     * @return true while calls to the store are suspended
     */
    boolean isBreakerOpen();

    /**
     * The deployment that registered these counters (its virtual server and context path): a
     * redeployment of the same application takes its names over.
     *
     * @return the deployment, empty when unknown
     */
    String getDeployment();

    /**
     * A number unique to this registration in the JVM: a deployment unregisters a name only
     * while it is still its own.
     *
     * @return the number
     */
    long getRegistration();
}
