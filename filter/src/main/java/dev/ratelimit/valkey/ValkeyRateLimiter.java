package dev.ratelimit.valkey;

import dev.ratelimit.internal.Claims;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Charges;
import dev.ratelimit.internal.GuardedListener;
import dev.ratelimit.internal.KeyValues;
import dev.ratelimit.internal.UndoableClaims;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.connection.CircuitBreaker;
import dev.ratelimit.valkey.lease.LeasePolicy;
import dev.ratelimit.valkey.lease.LeasedPeek;
import dev.ratelimit.valkey.lease.Leases;
import dev.ratelimit.valkey.script.Charge;
import dev.ratelimit.valkey.script.ScriptMode;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The shared limiter: every decision is one atomic function call on Valkey (Lua, run as one step), so every process pointed
 * at the same Valkey enforces one set of limits.
 *
 * <p>State keys are {@code <prefix>:<rule>:<algorithm>:{<key>}}, e.g.
 * {@code rl:v1:login:sliding-log:{user:4182}}. The braces are a cluster hash tag; the key is
 * made safe by hashing long or unusual values. The algorithm is part of the key so that a rule
 * whose algorithm changes on a deploy starts from fresh state instead of misreading the old
 * one; every algorithm keeps its state in units that survive an edit of limit, window or
 * burst (see the README's "When a rule is edited").
 *
 * <p>Time comes from the Valkey server ({@code TIME} inside the script) unless a client clock
 * is set: then app servers with drifting clocks cannot refill buckets wrongly.
 *
 * <p>Build one with {@link #builder()}:
 * <pre>{@code
 * RateLimiter limiter = ValkeyRateLimiter.builder()
 *         .settings(ValkeySettings.of("redis://localhost:6379"))
 *         .build();
 * }</pre>
 */
public final class ValkeyRateLimiter implements RateLimiter {

    /** Default key prefix: carries a version so a change of scheme is a new prefix, not a migration. */
    public static final String DEFAULT_KEY_PREFIX = "rl:v1";

    /** Default consecutive failures that open the circuit breaker. */
    public static final int DEFAULT_BREAKER_FAILURES = 5;
    /** Default time the circuit breaker stays open before a probe. */
    public static final Duration DEFAULT_BREAKER_OPEN_FOR = Duration.ofSeconds(2);

    /**
     * Default most pipelines on the wire at once: calls of threads that arrive while that many
     * are in flight go together in the next one. More make smaller batches (docs/BENCHMARKS.md).
     */
    public static final int DEFAULT_PIPELINES = 2;

    // Rooms: the client (LimiterClient), function calls and lost leases (LimiterCalls), giving back (Acquirer).
    private final LimiterClient client;
    private final String keyPrefix;
    private final CircuitBreaker breaker;
    private final LimiterCalls calls;
    private final Leases leases;
    private final Acquirer acquisitions;

    private ValkeyRateLimiter(LimiterOptions options) {
        this.client = LimiterClient.open(options.settings, options.client, options.pipelines);
        this.keyPrefix = options.keyPrefix;
        this.breaker = new CircuitBreaker(options.breakerFailures, options.breakerOpenFor, System::nanoTime,
                options.listener);
        this.calls = new LimiterCalls(client, breaker, options.clientClock, claim -> stateKey(claim.rule(), claim.key()));
        this.leases = new Leases(options.leases, options.leaseClock(), calls::giveBack);
        this.acquisitions = new Acquirer(calls, leases, options.listener);
    }

    /**
     * A builder: give it either {@link Builder#settings} or {@link Builder#client}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Whether a text is a valid key prefix.
     *
     * @param keyPrefix any text
     * @return true for 1 to 64 letters, digits, {@code :}, {@code .}, {@code _} or {@code -}
     */
    public static boolean isValidKeyPrefix(String keyPrefix) {
        return LimiterOptions.isValidKeyPrefix(keyPrefix);
    }

    /**
     * The Valkey key holding a rule's state for a key.
     *
     * @param rule the rule
     * @param key  what is limited
     * @return {@code <prefix>:<rule>:<algorithm>:{<safe key>}}
     */
    public String stateKey(Rule rule, String key) {
        return KeyValues.stateKey(keyPrefix, rule.name(), rule.algorithm().id(), key);
    }

    /**
     * {@inheritDoc}
     *
     * <p>On a standalone Valkey (or Sentinel-managed primary) this is one atomic function call. On
     * a cluster, claims whose keys hash to different slots (different identities: an address and
     * a user name) cannot share a script: they are decided per slot group, first all read-only,
     * then, if every group allows, one acquiring call per group. Each group is atomic; across
     * groups a request racing in between the two steps can, rarely, make one group consume while
     * another rejects. A request is allowed only if every group allowed and was charged; when one
     * rejects, the groups holding count-rejected rules record the attempt in a pass that can never
     * turn the rejection into an allow. Claims on one identity (hash tag) always share a slot and
     * stay atomic.
     */
    @Override
    public Decisions acquireAll(List<Claim> claims) {
        return acquisitions.take(claims).decisions();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Decided as {@link #acquireAll}, in the same calls. Giving back is one more function
     * call ({@code refund.lua}; one per slot group on a cluster), on the clock the decision used.
     * On a cluster, a request that one slot group rejected after the others had taken their
     * units (the race described at {@link #acquireAll}) has those units given back at once,
     * except what count-rejected rules recorded.
     */
    @Override
    public Reservation reserveAll(List<Claim> claims) {
        // Claims a layer of a request takes undoably (see UndoableClaims): from local leases too,
        // units a lease served going back to it (or, once it has ended, to Valkey on their own).
        return UndoableClaims.marked(claims) ? acquisitions.takeUndoable(claims) : acquisitions.reserve(claims);
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        List<Claim> claims = List.of(Claim.of(rule, key, cost));
        return Verdicts.combine(claims, acquisitions.peek(claims), false).get(0);
    }

    /**
     * Counts work already done on the claim's key whatever it has left: the cost, known after
     * the work, of a request no reservation of this limiter took (one a failure policy let
     * through while Valkey was away). The key goes into debt as a settlement's charge puts it
     * (see {@link dev.ratelimit.Reservation#commit(java.util.function.ToLongFunction)}), at most
     * eight quotas. Sent once: a lost reply is not sent again.
     *
     * @param claim the rule and key the work was done for (its cost is not used)
     * @param units the units to count, at least 1
     * @return whether all were counted (false: the key's debt reached its bound, or the rule
     *         cannot be charged: a sliding log or concurrency rule)
     * @throws dev.ratelimit.RateLimitException when Valkey cannot be reached in time
     */
    public boolean charge(Claim claim, long units) {
        Claims.check(List.of(claim));
        if (units < 1) {
            throw new IllegalArgumentException("a charge takes at least 1 unit, not " + units);
        }
        return Charges.supports(claim.rule().algorithm()) && acquisitions.charge(Charge.of(claim, units));
    }

    @Override
    public void reset(Rule rule, String key) {
        try {
            calls.reset(Claim.of(rule, key)); // the same argument checks as every other call
        } finally {
            leases.forget(rule, key); // even when Valkey failed: units held here are only given up
        }
    }

    /** {@return an inspector that reads, scans and forgets state by key for operators, on this limiter's connections} */
    public KeyInspector inspector() {
        return new KeyInspector(this, client, calls, leases, keyPrefix);
    }

    /** {@return whether the circuit breaker is open: calls are refused at once until a probe succeeds} */
    public boolean isBreakerOpen() {
        return breaker.isOpen();
    }

    @Override
    public void close() {
        leases.close();
        client.close();
    }

    /** Builds a {@link ValkeyRateLimiter}; not thread-safe, use once. */
    public static final class Builder {

        private final LimiterOptions options = new LimiterOptions();

        private Builder() {
        }

        /**
         * Sending concurrent decisions together: at most {@code pipelines} calls or pipelines are
         * on the wire at once; a thread arriving while they all are queues its call, and the next
         * free thread sends every queued call in one pipeline, one round trip for many decisions.
         * A call alone is sent on its own. A queued call waits at most the connect timeout, pool
         * wait and socket timeout of the settings together (120 ms by default, and for a
         * {@link #client given client}), queued and on the wire, then fails like a timeout; so
         * does the thread sending its pipeline, unless the given client is neither a
         * {@code RedisClient} nor a {@code RedisSentinelClient} (its own timeouts then). Not used
         * on a cluster. Default {@value #DEFAULT_PIPELINES}.
         *
         * @param pipelines at most this many on the wire at once, 1 to 64; 0 sends every call
         *                  on its own pooled connection
         * @return this builder
         */
        public Builder pipelines(int pipelines) {
            options.pipelines(pipelines);
            return this;
        }

        /**
         * The circuit breaker: after {@code failures} consecutive failures, provided the last
         * second saw at least twice that many calls and at least half of them failed (so that a
         * busy server's bursts of timeouts are not taken for a dead server), no call is made for
         * {@code openFor}; then one probe call decides whether calls resume. Default 5 and 2 s.
         *
         * @param failures consecutive failures that open it; 0 disables the breaker
         * @param openFor  how long it stays open before a probe
         * @return this builder
         */
        public Builder circuitBreaker(int failures, Duration openFor) {
            options.circuitBreaker(failures, openFor);
            return this;
        }

        /**
         * Told when the circuit breaker opens and closes. Default: nobody. Whatever it throws is
         * caught and logged once: it never fails a call nor counts as a failure of Valkey.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(RateLimitListener listener) {
            options.listener = GuardedListener.of(listener);
            return this;
        }

        /**
         * Connect with these settings; the limiter owns the client and closes it.
         *
         * @param settings URL, timeouts, pool
         * @return this builder
         */
        public Builder settings(ValkeySettings settings) {
            options.settings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * Use an existing client: {@code RedisClient}, {@code RedisClusterClient} or
         * {@code RedisSentinelClient}; the caller closes it. Its timeouts bound every call.
         *
         * @param client any {@link UnifiedJedis}
         * @return this builder
         */
        public Builder client(UnifiedJedis client) {
            options.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * The first part of every state key. Default {@value #DEFAULT_KEY_PREFIX}.
         *
         * @param keyPrefix letters, digits, {@code :}, {@code .}, {@code _}, {@code -}; at most 64
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            options.keyPrefix(keyPrefix);
            return this;
        }

        /**
         * Take time from this clock instead of the Valkey server's. For tests, and for users
         * whose app servers keep accurate time. Default: the server's clock.
         *
         * @param millis epoch milliseconds, e.g. {@code System::currentTimeMillis}
         * @return this builder
         */
        public Builder clientClock(LongSupplier millis) {
            options.clientClock = Objects.requireNonNull(millis, "millis");
            return this;
        }

        /**
         * Lets this limiter take units of the rule ahead, per key, and serve the key's next
         * requests from them without a call (token bucket, GCRA and fixed window). Every unit
         * served was taken from Valkey first, so the rule's bound holds across instances; units
         * one instance holds are unavailable to others until used or given back
         * (docs/local-leases.md).
         *
         * @param rule the rule
         * @param size the most units one lease takes ahead, at least 1
         * @param time how long a lease serves before its unused units go back, at least 1 ms
         * @return this builder
         * @throws IllegalArgumentException naming the rule when it is not a token bucket, GCRA or
         *                                  fixed window, or is a shadow rule, counts rejected
         *                                  attempts or has a {@link Rule#maxDelay()}
         */
        public Builder localLease(Rule rule, long size, Duration time) {
            Objects.requireNonNull(rule, "rule");
            boolean delays = !rule.maxDelay().isZero();
            if (!LeasePolicy.supports(rule.algorithm()) || rule.shadow() || rule.countRejected() || delays) {
                throw new IllegalArgumentException("rule '" + rule.name() + "' (" + rule.algorithm().id()
                        + (rule.shadow() ? ", shadow" : "") + (rule.countRejected() ? ", count-rejected" : "")
                        + (delays ? ", max delay " + rule.maxDelay() : "")
                        + ") cannot be leased: local leases serve token-bucket, gcra and fixed-window rules that "
                        + "neither only observe nor count rejected attempts nor hold requests for slots to come");
            }
            options.leases.put(rule.name(), new LeasePolicy(size, time));
            return this;
        }

        /**
         * The limiter.
         *
         * @return a new limiter
         * @throws IllegalStateException unless exactly one of settings and client was given
         */
        public ValkeyRateLimiter build() {
            options.checkOneConnection();
            return new ValkeyRateLimiter(options);
        }
    }
}
