package dev.ratelimit.metrics;

import dev.ratelimit.RateLimitListener;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/** The counters of one rule; also its JMX MBean. Thread-safe and cheap to update. */
public final class RuleMetrics implements RuleMetricsMBean {

    private final LongAdder allowed = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder shadowRejected = new LongAdder();
    private final LongAdder storeErrors = new LongAdder();
    private final LongAdder fallbackDecisions = new LongAdder();
    private final LongAdder refunded = new LongAdder();
    private final LongAdder refundsDropped = new LongAdder();
    private final LongAdder charged = new LongAdder();
    private final LongAdder chargesDropped = new LongAdder();
    private final LongAdder denyCacheHits = new LongAdder();
    private final LongAdder leaseHits = new LongAdder();
    private final LongAdder nearLimit = new LongAdder();
    private final LongAdder delayed = new LongAdder();
    private final LongAdder delayNanos = new LongAdder();
    private final java.util.concurrent.atomic.LongAccumulator longestDelayNanos =
            new java.util.concurrent.atomic.LongAccumulator(Math::max, 0);
    private final LongAdder decisions = new LongAdder();
    private final LongAdder decisionNanos = new LongAdder();
    private final java.util.concurrent.atomic.LongAccumulator slowestNanos =
            new java.util.concurrent.atomic.LongAccumulator(Math::max, 0);
    private final BooleanSupplier breakerOpen;
    private final String deployment;
    private final long registration;
    private final String rule;
    private final java.util.function.Supplier<KeyOperations> keys;

    /**
     * Counters for one rule.
     *
     * @param breakerOpen whether the store's circuit breaker is open now
     */
    public RuleMetrics(BooleanSupplier breakerOpen) {
        this(breakerOpen, "", 0);
    }

    /**
     * Counters registered by a deployment.
     *
     * @param breakerOpen  whether the store's circuit breaker is open now
     * @param deployment   the deployment registering them (see {@link #getDeployment()})
     * @param registration a number unique to the registering {@code Metrics} in the JVM
     */
    public RuleMetrics(BooleanSupplier breakerOpen, String deployment, long registration) {
        this(breakerOpen, deployment, registration, "", () -> KeyOperations.NONE);
    }

    /**
     * A rule's metrics in a deployment, with the operations of its MBean.
     *
     * @param breakerOpen  whether the store's circuit breaker is open
     * @param deployment   the deployment's name
     * @param registration this registration's number
     * @param rule         the rule's name
     * @param keys         the filter's key operations as they are when an operation is called
     */
    public RuleMetrics(BooleanSupplier breakerOpen, String deployment, long registration, String rule,
                       java.util.function.Supplier<KeyOperations> keys) {
        this.breakerOpen = breakerOpen;
        this.deployment = deployment;
        this.registration = registration;
        this.rule = rule;
        this.keys = keys;
    }

    @Override
    public String inspect(String keyValues) {
        return keys.get().inspect(rule, keyValues);
    }

    @Override
    public String reset(String keyValues) {
        return keys.get().reset(rule, keyValues);
    }

    @Override
    public String getDeployment() {
        return deployment;
    }

    @Override
    public long getRegistration() {
        return registration;
    }

    /**
     * Counts an event.
     *
     * @param event what happened
     */
    public void record(RateLimitListener.Event event) {
        switch (event) {
            case ALLOWED -> allowed.increment();
            case REJECTED -> rejected.increment();
            case SHADOW_REJECTED -> shadowRejected.increment();
            case STORE_ERROR -> storeErrors.increment();
            case FALLBACK -> fallbackDecisions.increment();
            case REFUNDED -> refunded.increment();
            case REFUND_DROPPED -> refundsDropped.increment();
            case DENY_CACHE_HIT -> denyCacheHits.increment();
            case LEASE_HIT -> leaseHits.increment();
            case NEAR_LIMIT -> nearLimit.increment();
            case CHARGED -> charged.increment();
            case CHARGE_DROPPED -> chargesDropped.increment();
            case DELAYED -> {
                // Counted with its wait, by recordDelay.
            }
        }
    }

    /**
     * Counts one request held for its slot.
     *
     * @param nanos the time until its slot
     */
    public void recordDelay(long nanos) {
        delayed.increment();
        delayNanos.add(nanos);
        longestDelayNanos.accumulate(nanos);
    }

    @Override
    public long getDelayed() {
        return delayed.sum();
    }

    @Override
    public double getMeanDelayMillis() {
        long count = delayed.sum();
        return count == 0 ? 0 : delayNanos.sum() / 1e6 / count;
    }

    @Override
    public double getLongestDelayMillis() {
        return longestDelayNanos.get() / 1e6;
    }

    /**
     * Counts one decision's latency.
     *
     * @param nanos the time the store took
     */
    public void recordDecisionTime(long nanos) {
        decisions.increment();
        decisionNanos.add(nanos);
        slowestNanos.accumulate(nanos);
    }

    @Override
    public long getDenyCacheHits() {
        return denyCacheHits.sum();
    }

    @Override
    public long getLeaseHits() {
        return leaseHits.sum();
    }

    @Override
    public long getNearLimit() {
        return nearLimit.sum();
    }

    @Override
    public double getMeanDecisionMillis() {
        long count = decisions.sum();
        return count == 0 ? 0 : decisionNanos.sum() / 1e6 / count;
    }

    @Override
    public double getSlowestDecisionMillis() {
        return slowestNanos.get() / 1e6;
    }

    @Override
    public long getAllowed() {
        return allowed.sum();
    }

    @Override
    public long getRejected() {
        return rejected.sum();
    }

    @Override
    public long getShadowRejected() {
        return shadowRejected.sum();
    }

    @Override
    public long getStoreErrors() {
        return storeErrors.sum();
    }

    @Override
    public long getFallbackDecisions() {
        return fallbackDecisions.sum();
    }

    @Override
    public long getRefunded() {
        return refunded.sum();
    }

    @Override
    public long getCharged() {
        return charged.sum();
    }

    @Override
    public long getChargesDropped() {
        return chargesDropped.sum();
    }

    @Override
    public long getRefundsDropped() {
        return refundsDropped.sum();
    }

    @Override
    public boolean isBreakerOpen() {
        return breakerOpen.getAsBoolean();
    }
}
