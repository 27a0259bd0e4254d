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
     * Requests charged after the fact for work beyond what they reserved ({@code cost-from}).
     *
     * @return the count
     */
    long getCharged();

    /**
     * Charges after the fact not counted in full: the store unreachable, a lost reply, or the
     * key's debt at its bound.
     *
     * @return the count
     */
    long getChargesDropped();

    /**
     * Requests admitted for a slot to come ({@code max-delay}), held rather than rejected (also
     * counted as allowed).
     *
     * @return the count
     */
    long getDelayed();

    /**
     * The mean time delayed requests waited for their slot, in ms (0 before the first).
     *
     * @return the mean wait
     */
    double getMeanDelayMillis();

    /**
     * The longest time a delayed request waited for its slot, in ms.
     *
     * @return the longest wait
     */
    double getLongestDelayMillis();

    /**
     * Rejections answered by the deny cache, without the store (also counted as rejected).
     *
     * @return the count
     */
    long getDenyCacheHits();

    /**
     * Allowed requests whose units for this rule came whole from a local lease, with no call to
     * Valkey for the rule (also counted as allowed).
     *
     * @return the count
     */
    long getLeaseHits();

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

    /**
     * The state of one key of this rule in words, as the filter would decide a request now,
     * consuming nothing: remaining, when the next unit comes, when the quota is full again, the
     * units this instance holds in local leases, and the raw state in Valkey with its TTL (the
     * same as {@code ratelimit inspect}). An operation.
     *
     * @param keyValues the key's values, one per part of the rule's key ({@code global} takes
     *                  none), e.g. a user name or an address; for a key of several parts,
     *                  separated by spaces (a key of one part takes the whole text)
     * @return the state, one fact per line
     */
    String inspect(String keyValues);

    /**
     * Forgets the state of one key of this rule, in Valkey, in this instance's fallback, deny
     * cache and local leases, so that its next request has the whole quota; says what it was
     * just before (the same as {@code ratelimit reset}). An operation.
     *
     * @param keyValues the key's values, as for {@link #inspect}
     * @return what was removed
     */
    String reset(String keyValues);
}
