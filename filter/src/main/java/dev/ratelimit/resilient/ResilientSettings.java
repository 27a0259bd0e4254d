package dev.ratelimit.resilient;

import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.GuardedListener;
import dev.ratelimit.local.LocalRateLimiter;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.LongSupplier;

/**
 * What a {@link ResilientRateLimiter.Builder} was given, each value checked when it is set (so
 * that the error names the setting and the value at the call that gave them), and the parts the
 * limiter is built of. The builder keeps the documented surface and delegates here: a default or
 * a check changes in this file, what the builder promises in its Javadoc.
 */
final class ResilientSettings {

    private final Supplier<? extends RateLimiter> shared;
    private final Map<String, FailurePolicy> policies = new HashMap<>();
    private FailurePolicy defaultPolicy = FailurePolicy.open();
    private LocalRateLimiter fallback;
    private int denyCacheEntries = ResilientRateLimiter.DEFAULT_DENY_CACHE_ENTRIES;
    private Duration denyCacheHold = ResilientRateLimiter.DEFAULT_DENY_CACHE_HOLD;
    private RateLimitListener listener = RateLimitListener.NONE;
    private Duration failureRetryAfter = ResilientRateLimiter.DEFAULT_FAILURE_RETRY_AFTER;
    private LongSupplier clock = System::currentTimeMillis;
    private double nearLimitRatio = ResilientRateLimiter.DEFAULT_NEAR_LIMIT_RATIO;
    private ResilientRateLimiter previous;

    /**
     * Settings around a shared limiter, every other value its default; the limiter is made when
     * the resilient one is built, so a builder dropped unbuilt holds no connection.
     */
    ResilientSettings(Supplier<? extends RateLimiter> shared) {
        this.shared = Objects.requireNonNull(shared, "shared");
    }

    /** As {@link ResilientRateLimiter.Builder#policy}. */
    void policy(String rule, FailurePolicy policy) {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(policy, "policy");
        if (policy instanceof FailurePolicy.Local local && !local.rule().name().equals(rule)) {
            throw new IllegalArgumentException("rule '" + rule + "': its local rule is named '"
                    + local.rule().name() + "'; give it the same name");
        }
        policies.put(rule, policy);
    }

    /** As {@link ResilientRateLimiter.Builder#defaultPolicy}. */
    void defaultPolicy(FailurePolicy policy) {
        if (Objects.requireNonNull(policy, "policy").kind() == FailurePolicy.Kind.LOCAL) {
            throw new IllegalArgumentException("a local policy names one rule: give it with policy(rule, ...)");
        }
        this.defaultPolicy = policy;
    }

    /** As {@link ResilientRateLimiter.Builder#fallback}. */
    void fallback(LocalRateLimiter fallback) {
        this.fallback = Objects.requireNonNull(fallback, "fallback");
    }

    /** As {@link ResilientRateLimiter.Builder#denyCache}. */
    void denyCache(int entries) {
        if (entries < 0) {
            throw new IllegalArgumentException("deny cache entries " + entries + " must be at least 0");
        }
        this.denyCacheEntries = entries;
    }

    /** As {@link ResilientRateLimiter.Builder#denyCacheHold}. */
    void denyCacheHold(Duration hold) {
        if (hold.toMillis() < 1) {
            throw new IllegalArgumentException("deny cache hold " + hold + " must be at least 1 ms");
        }
        this.denyCacheHold = hold;
    }

    /** As {@link ResilientRateLimiter.Builder#replacing}. */
    void replacing(ResilientRateLimiter previous) {
        this.previous = Objects.requireNonNull(previous, "previous");
    }

    /** As {@link ResilientRateLimiter.Builder#listener}. */
    void listener(RateLimitListener listener) {
        this.listener = GuardedListener.of(listener);
    }

    /** As {@link ResilientRateLimiter.Builder#failureRetryAfter}. */
    void failureRetryAfter(Duration retryAfter) {
        if (retryAfter == null || retryAfter.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("failure retry-after " + retryAfter + " must be at least 1 s");
        }
        this.failureRetryAfter = retryAfter;
    }

    /** As {@link ResilientRateLimiter.Builder#nearLimitRatio}. */
    void nearLimitRatio(double ratio) {
        if (!(ratio > 0 && ratio <= 1)) {
            throw new IllegalArgumentException("near-limit ratio " + ratio + " must be above 0 and at most 1");
        }
        this.nearLimitRatio = ratio;
    }

    /** As {@link ResilientRateLimiter.Builder#clock}. */
    void clock(LongSupplier millis) {
        this.clock = Objects.requireNonNull(millis, "millis");
    }

    /** The limiter that decides while it can. */
    RateLimiter shared() {
        return Objects.requireNonNull(shared.get(), "shared");
    }

    /** The policies, with the fallback given or, built here, a new in-process limiter. */
    FailurePolicies policies() {
        return new FailurePolicies(policies, defaultPolicy, fallback != null ? fallback : LocalRateLimiter.create(),
                listener, failureRetryAfter);
    }

    /** The decision path this one replaces, whose deny cache it goes on with; null when none. */
    ResilientRateLimiter previous() {
        return previous;
    }

    /** A deny cache of this limiter's own, as set; null when turned off (0 entries). */
    DenyCache newDenyCache() {
        return denyCacheEntries > 0 ? new DenyCache(denyCacheEntries, denyCacheHold.toMillis()) : null;
    }

    /** The listener, guarded: whatever it throws is caught and logged once. */
    RateLimitListener listener() {
        return listener;
    }

    /** The deny cache's clock, in epoch milliseconds. */
    LongSupplier clock() {
        return clock;
    }

    /** The share of a quota used from which an allowed request is near its limit. */
    double nearLimitRatio() {
        return nearLimitRatio;
    }
}
