package dev.ratelimit.resilient;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.UndoableClaims;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The decision path of the filter, for code too: a shared limiter (usually
 * {@code ValkeyRateLimiter}) with, per rule, a {@link FailurePolicy} for when it cannot decide,
 * the in-process fallback, the deny cache and the metrics events. {@link #acquireAll} never
 * throws {@link RateLimitException}: what the store cannot decide, each rule's policy does,
 * and every {@link Decision} says which ({@link Decision#basis()}).
 *
 * <pre>{@code
 * Rule resetMails = Rule.slidingLog("reset-mail", 3, Duration.ofHours(1));
 * try (RateLimiter limiter = ResilientRateLimiter.builder(ValkeySettings.of("redis://localhost:6379"))
 *         .policy(resetMails, FailurePolicy.closed())
 *         .build()) {
 *     Decision decision = limiter.acquire(resetMails, "user:4182");
 * }
 * }</pre>
 *
 * <p>Settings, each with its default: {@link Builder#policy} per rule, else
 * {@link Builder#defaultPolicy} ({@link FailurePolicy#open()}); {@link Builder#denyCache}
 * 10,000 entries (0: off); {@link Builder#fallback} a new {@link LocalRateLimiter};
 * {@link Builder#failureRetryAfter} 1 s; {@link Builder#nearLimitRatio} 0.8; {@link Builder#listener} nobody.
 */
public final class ResilientRateLimiter implements RateLimiter {

    /** Default most rejections the deny cache remembers. */
    public static final int DEFAULT_DENY_CACHE_ENTRIES = 10_000;
    /** The longest the deny cache replays a rejection by default. */
    public static final Duration DEFAULT_DENY_CACHE_HOLD = Duration.ofSeconds(1);
    /** Default share of a quota used from which an allowed request is near its limit, as Envoy's 80 %. */
    public static final double DEFAULT_NEAR_LIMIT_RATIO = 0.8;
    /** Default retry-after of a decision refused by a closed policy. */
    public static final Duration DEFAULT_FAILURE_RETRY_AFTER = Duration.ofSeconds(1);

    // The parts, built from ResilientSettings; the request's way through them is DecisionPath's.
    private final RateLimiter shared;
    private final FailurePolicies policies;
    private final DenyCache denyCache;
    private final DecisionPath path;

    private ResilientRateLimiter(Builder builder) {
        ResilientSettings settings = builder.settings;
        this.shared = settings.shared();
        this.policies = settings.policies();
        // A refresh goes on with the replaced path's deny cache (see Builder#replacing).
        this.denyCache = settings.previous() != null ? settings.previous().denyCache : settings.newDenyCache();
        this.path = new DecisionPath(shared, policies, denyCache, new StoreHealth(), settings.listener(),
                settings.clock(), settings.nearLimitRatio());
    }

    /**
     * A builder of the limiter most code wants: shared through the Valkey the settings name,
     * with each rule's failure policy, the in-process fallback and the deny cache around it.
     * The connections are made by {@link Builder#build()}.
     *
     * @param settings where Valkey is and how to reach it
     * @return a new builder
     */
    public static Builder builder(ValkeySettings settings) {
        java.util.Objects.requireNonNull(settings, "settings");
        return new Builder(() -> ValkeyRateLimiter.builder().settings(settings).build());
    }

    /**
     * A builder around a Valkey limiter set up with options of its own (local leases, a key
     * prefix, a client of one's own), which {@link Builder#build()} builds.
     *
     * @param valkey the Valkey limiter's builder, settings or client given
     * @return a new builder
     */
    public static Builder builder(ValkeyRateLimiter.Builder valkey) {
        java.util.Objects.requireNonNull(valkey, "valkey");
        return new Builder(valkey::build);
    }

    /**
     * A builder around any shared limiter (one's own, or one already built).
     *
     * @param shared the limiter that decides while it can; closed with this one
     * @return a new builder
     */
    public static Builder builder(RateLimiter shared) {
        java.util.Objects.requireNonNull(shared, "shared");
        return new Builder(() -> shared);
    }

    /**
     * The policy of a rule.
     *
     * @param rule the rule
     * @return its policy, or the default one
     */
    public FailurePolicy policy(Rule rule) {
        return policies.policy(java.util.Objects.requireNonNull(rule, "rule").name());
    }

    /**
     * {@inheritDoc}
     *
     * <p>In order: a rejection the deny cache remembers is answered without the store (not
     * for a request that a count-rejected rule must see); then the store decides; a rule whose
     * state it cannot read falls to its policy alone, the others are decided again; when the
     * store cannot be reached, every rule falls to its policy. A closed policy makes the
     * request {@link Decisions#unavailable()} and nothing more is counted; local policies are
     * decided together by the in-process limiter.
     */
    @Override
    public Decisions acquireAll(List<Claim> claims) {
        return path.decide(claims, DecisionPath.Mode.ACQUIRE).decisions();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Decided as {@link #acquireAll}. Units the store or the in-process fallback
     * ({@link FailurePolicy#local}) took can be given back; a request decided by the deny cache,
     * or by an open or closed policy, took nothing. Giving back never
     * throws: when the store cannot be reached the refund is dropped, not retried (the units
     * stay counted until their window or refill frees them), logged once while the store is
     * down, and reported as {@link RateLimitListener.Event#REFUND_DROPPED}.
     */
    @Override
    public Reservation reserveAll(List<Claim> claims) {
        // Claims a layer of a request takes undoably (see UndoableClaims) keep the deny cache and leases on.
        return path.decide(claims, UndoableClaims.marked(claims) ? DecisionPath.Mode.TAKE : DecisionPath.Mode.RESERVE);
    }

    /**
     * {@inheritDoc}
     *
     * <p>When the store cannot answer, the rule's policy does, as for {@link #acquireAll}.
     */
    @Override
    public Decision peek(Rule rule, String key, long cost) {
        return path.peek(rule, key, cost);
    }

    /**
     * Forgets the key in the store, in the fallback and in the deny cache.
     *
     * @throws RateLimitException if the store cannot be reached in time (the fallback is reset anyway)
     */
    @Override
    public void reset(Rule rule, String key) {
        policies.reset(rule, key);
        try {
            shared.reset(rule, key);
        } finally {
            // After the store's reset (even a failed one may have reached it): a rejection
            // decided on the state before it, and on its way meanwhile, must not be kept.
            if (denyCache != null) {
                denyCache.forget(rule.name(), key);
            }
        }
    }

    /** Closes the shared limiter and the fallback, each even if the other fails. */
    @Override
    public void close() {
        try {
            shared.close();
        } finally {
            policies.close();
        }
    }

    /** Builds a {@link ResilientRateLimiter}; not thread-safe, use once. */
    public static final class Builder {
        // The values and their checks; this class keeps the documented surface.
        private final ResilientSettings settings;

        private Builder(java.util.function.Supplier<? extends RateLimiter> shared) {
            this.settings = new ResilientSettings(shared);
        }

        /**
         * The rule's failure policy. Default: {@link #defaultPolicy}.
         *
         * @param rule   the rule
         * @param policy its policy; a local one's rule has the same name
         * @return this builder
         * @throws IllegalArgumentException if a local policy's rule has another name
         */
        public Builder policy(Rule rule, FailurePolicy policy) {
            settings.policy(java.util.Objects.requireNonNull(rule, "rule").name(), policy);
            return this;
        }

        /**
         * The policy of rules given none. Default {@link FailurePolicy#open()}; a local policy
         * cannot be a default (its rule is one rule's).
         *
         * @param policy open or closed
         * @return this builder
         */
        public Builder defaultPolicy(FailurePolicy policy) {
            settings.defaultPolicy(policy);
            return this;
        }

        /**
         * The in-process limiter for local policies; the limiter closes it. Default: a new
         * {@link LocalRateLimiter#create()}.
         *
         * @param fallback the fallback
         * @return this builder
         */
        public Builder fallback(LocalRateLimiter fallback) {
            settings.fallback(fallback);
            return this;
        }

        /**
         * How many rejections to remember, so that a client hammering a limit is answered
         * without the store until its retry-after. Default
         * {@value ResilientRateLimiter#DEFAULT_DENY_CACHE_ENTRIES}; 0 turns it off.
         *
         * @param entries the bound, at least 0
         * @return this builder
         */
        public Builder denyCache(int entries) {
            settings.denyCache(entries);
            return this;
        }

        /**
         * The longest the deny cache replays a rejection, whatever its retry-after. The cache
         * sees only what this process does to a key: units another instance gives back, or a
         * reset made there, are seen here within this. Default 1 s: a client hammering a limit
         * then costs the store one call a second per key and instance.
         *
         * @param hold at least 1 ms
         * @return this builder
         */
        public Builder denyCacheHold(Duration hold) {
            settings.denyCacheHold(hold);
            return this;
        }

        /**
         * Builds the decision path that replaces {@code previous} on the same store, as a refresh
         * of the settings does: it goes on with that path's deny cache (its size too, and what
         * it learned of rules whose units are reserved), so that units given back by a
         * reservation taken before the change, or taken since by either path, still clear the
         * rejections they make early or wrong. Default: a deny cache of its own.
         *
         * @param previous the decision path replaced
         * @return this builder
         */
        public Builder replacing(ResilientRateLimiter previous) {
            settings.replacing(previous);
            return this;
        }

        /**
         * Told of every decision and store failure; whatever it throws is caught and logged once.
         * Default: nobody.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(RateLimitListener listener) {
            settings.listener(listener);
            return this;
        }

        /**
         * The retry-after of a decision refused by a closed policy. Default 1 s.
         *
         * @param retryAfter at least 1 s
         * @return this builder
         */
        public Builder failureRetryAfter(Duration retryAfter) {
            settings.failureRetryAfter(retryAfter);
            return this;
        }

        /**
         * How much of a rule's quota used makes an allowed request {@link
         * RateLimitListener.Event#NEAR_LIMIT}. Default {@value ResilientRateLimiter#DEFAULT_NEAR_LIMIT_RATIO}.
         *
         * @param ratio above 0, at most 1
         * @return this builder
         */
        public Builder nearLimitRatio(double ratio) {
            settings.nearLimitRatio(ratio);
            return this;
        }

        /**
         * The clock of the deny cache. Default: the system clock.
         *
         * @param millis epoch milliseconds
         * @return this builder
         */
        public Builder clock(LongSupplier millis) {
            settings.clock(millis);
            return this;
        }

        /**
         * The limiter.
         *
         * @return a new limiter
         */
        public ResilientRateLimiter build() {
            return new ResilientRateLimiter(this);
        }
    }
}
