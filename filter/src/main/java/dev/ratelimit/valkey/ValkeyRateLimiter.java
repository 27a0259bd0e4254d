package dev.ratelimit.valkey;

import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.Claim;
import dev.ratelimit.internal.KeyValues;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.GuardedListener;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.UnreadableStateException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shared limiter: every decision is one atomic script on Valkey, so every process pointed
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

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9:._-]{1,64}");
    private static final System.Logger LOG = System.getLogger(ValkeyRateLimiter.class.getName());
    private static final int ARGS_PER_RULE = 7;
    private static final String SERVER_CLOCK = "-1";
    /** The modes of {@code dispatcher.lua} (its ARGV[2]). */
    private static final String PEEK = "0";
    private static final String ACQUIRE = "1";
    private static final String RECORD_REJECTION = "2";
    /** The script's error for one unreadable state: {@code RATELIMIT_STATE <rule index> <detail>}. */
    private static final Pattern STATE_ERROR = Pattern.compile("(?:ERR )?RATELIMIT_STATE (\\d+) (.*)", Pattern.DOTALL);

    private final UnifiedJedis client;
    private final boolean ownsClient;
    /** On a cluster, claims whose keys hash to different slots cannot share one script call. */
    private final boolean cluster;
    private final String keyPrefix;
    private final LongSupplier clientClock;
    private final String endpoint;
    private final CircuitBreaker breaker;
    private final LimiterScript script = LimiterScript.load();
    /** Rules whose unreadable state was logged already: once each, not once per request. */
    private final Set<String> unreadableRules = ConcurrentHashMap.newKeySet();

    private ValkeyRateLimiter(Builder builder) {
        if (builder.client != null) {
            this.client = builder.client;
            this.ownsClient = false;
            this.endpoint = "Valkey";
        } else {
            if (!builder.settings.cluster()) {
                // Load what closing a client needs now: a container undeploying the application
                // may refuse to load classes by the time close() runs. No connection is opened.
                ValkeyClients.create(builder.settings).close();
            }
            this.client = ValkeyClients.create(builder.settings);
            this.ownsClient = true;
            this.endpoint = "Valkey at " + builder.settings.redactedUrl();
        }
        this.cluster = client instanceof RedisClusterClient;
        this.keyPrefix = builder.keyPrefix;
        this.clientClock = builder.clientClock;
        this.breaker = new CircuitBreaker(builder.breakerFailures, builder.breakerOpenFor, System::nanoTime,
                builder.listener);
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
        return keyPrefix != null && PREFIX.matcher(keyPrefix).matches();
    }

    /**
     * The Valkey key holding a rule's state for a key.
     *
     * @param rule the rule
     * @param key  what is limited
     * @return {@code <prefix>:<rule>:<algorithm>:{<safe key>}}
     */
    public String stateKey(Rule rule, String key) {
        return keyPrefix + ':' + rule.name() + ':' + rule.algorithm().id() + ":{" + KeyValues.safe(key) + '}';
    }

    /**
     * {@inheritDoc}
     *
     * <p>On a standalone Valkey (or Sentinel-managed primary) this is one atomic script call. On
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
        Claims.check(claims);
        String now = now();
        if (cluster) {
            List<List<Integer>> groups = slotGroups(claims);
            if (groups.size() > 1) {
                return acquireAcrossSlots(claims, groups, now);
            }
        }
        return call(claims, ACQUIRE, now);
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        return call(List.of(Claim.of(rule, key, cost)), PEEK, now()).decisions().get(0);
    }

    private String now() {
        return clientClock == null ? SERVER_CLOCK : Long.toString(clientClock.getAsLong());
    }

    /** Indexes of the claims, grouped by the cluster slot of their state key, in order of appearance. */
    private List<List<Integer>> slotGroups(List<Claim> claims) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < claims.size(); i++) {
            int slot = JedisClusterCRC16.getSlot(stateKey(claims.get(i).rule(), claims.get(i).key()));
            bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(i);
        }
        return new ArrayList<>(bySlot.values());
    }

    private Decisions acquireAcrossSlots(List<Claim> claims, List<List<Integer>> groups, String now) {
        Verdicts.Answer[] answers = new Verdicts.Answer[claims.size()];
        boolean allAllowed = true;
        for (List<Integer> group : groups) {
            Decisions peeked = call(subList(claims, group), PEEK, now);
            allAllowed &= peeked.allowed();
        }
        for (List<Integer> group : groups) {
            List<Claim> claimsOfGroup = subList(claims, group);
            if (allAllowed) {
                put(answers, group, callForAnswers(claimsOfGroup, ACQUIRE, now));
            } else {
                // Rejected: groups with count-rejected rules record the attempt; the others only
                // tell their state. Neither pass can turn the rejection into an allow.
                boolean records = claimsOfGroup.stream().anyMatch(c -> c.rule().countRejected());
                put(answers, group, callForAnswers(claimsOfGroup, records ? RECORD_REJECTION : PEEK, now));
            }
        }
        return Verdicts.combine(claims, List.of(answers), !allAllowed);
    }

    private static List<Claim> subList(List<Claim> claims, List<Integer> indexes) {
        List<Claim> sub = new ArrayList<>(indexes.size());
        for (int i : indexes) {
            sub.add(claims.get(i));
        }
        return sub;
    }

    private static void put(Verdicts.Answer[] answers, List<Integer> indexes, List<Verdicts.Answer> group) {
        for (int j = 0; j < indexes.size(); j++) {
            answers[indexes.get(j)] = group.get(j);
        }
    }

    @Override
    public void reset(Rule rule, String key) {
        Claim.of(rule, key); // the same argument checks as every other call
        guarded("reset", List.of(), () -> client.del(stateKey(rule, key)));
    }

    /**
     * Whether the circuit breaker is open: calls are refused at once until a probe succeeds.
     *
     * @return true while open
     */
    public boolean isBreakerOpen() {
        return breaker.isOpen();
    }

    @Override
    public void close() {
        if (ownsClient) {
            client.close();
        }
    }

    private Decisions call(List<Claim> claims, String mode, String now) {
        return Verdicts.combine(claims, callForAnswers(claims, mode, now), false);
    }

    /** One script call; {@code mode} is ARGV[2] of {@code dispatcher.lua}. */
    private List<Verdicts.Answer> callForAnswers(List<Claim> claims, String mode, String now) {
        List<String> keys = new ArrayList<>(claims.size());
        List<String> args = new ArrayList<>(2 + ARGS_PER_RULE * claims.size());
        args.add(now);
        args.add(mode);
        for (Claim claim : claims) {
            Rule rule = claim.rule();
            keys.add(stateKey(rule, claim.key()));
            args.add(rule.algorithm().id());
            args.add(Long.toString(rule.limit()));
            args.add(Long.toString(rule.window().toMillis()));
            args.add(Long.toString(rule.burst()));
            args.add(Long.toString(claim.cost()));
            args.add(rule.countRejected() ? "1" : "0");
            args.add(rule.shadow() ? "1" : "0");
        }
        Object reply = guarded(PEEK.equals(mode) ? "peek" : "acquire", claims,
                () -> script.run(client, keys, args));
        return parse(claims, reply);
    }

    /**
     * Runs one call to Valkey through the circuit breaker. A script error naming one claim's
     * state (see {@code dispatcher.lua}) is that key's fault, not the server's: the breaker
     * counts it as an answer.
     */
    private <T> T guarded(String operation, List<Claim> claims, Supplier<T> call) {
        if (!breaker.allowCall()) {
            throw new RateLimitException(operation + " not attempted: the circuit breaker for " + endpoint
                    + " is open after repeated failures", null);
        }
        try {
            T result = call.get();
            breaker.succeeded();
            return result;
        } catch (JedisDataException e) {
            Matcher state = e.getMessage() == null ? null : STATE_ERROR.matcher(e.getMessage());
            if (state != null && state.lookingAt()) {
                breaker.succeeded();
                int index = Integer.parseInt(state.group(1)) - 1;
                Claim claim = claims.get(Math.max(0, Math.min(index, claims.size() - 1)));
                throw unreadableState(claim.rule().name(), stateKey(claim.rule(), claim.key()), state.group(2));
            }
            breaker.failed();
            throw failure(operation, e);
        } catch (RuntimeException e) {
            breaker.failed();
            throw failure(operation, e);
        }
    }

    private UnreadableStateException unreadableState(String rule, String key, String detail) {
        String message = "rule '" + rule + "': its state at key " + key + " cannot be read on " + endpoint + " ("
                + detail + "); delete the key or wait for its TTL";
        if (unreadableRules.add(rule)) {
            LOG.log(System.Logger.Level.WARNING, message + ". Requests on such keys get the rule's on-failure "
                    + "policy; this is logged once per rule");
        } else {
            LOG.log(System.Logger.Level.DEBUG, message);
        }
        return new UnreadableStateException(rule, message);
    }

    private List<Verdicts.Answer> parse(List<Claim> claims, Object reply) {
        if (!(reply instanceof List<?> values) || values.size() != 1 + 4 * claims.size()) {
            throw new RateLimitException(endpoint + " sent an unexpected script reply: " + reply, null);
        }
        List<Verdicts.Answer> answers = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            int at = 1 + 4 * i;
            answers.add(new Verdicts.Answer(number(values.get(at)) == 1, number(values.get(at + 1)),
                    number(values.get(at + 2)), number(values.get(at + 3))));
        }
        return answers;
    }

    private long number(Object value) {
        if (value instanceof Long number) {
            return number;
        }
        throw new RateLimitException(endpoint + " sent a non-integer in the script reply: " + value, null);
    }

    private RateLimitException failure(String operation, RuntimeException e) {
        // Jedis messages name hosts and errors, never the password; the endpoint is redacted.
        return new RateLimitException(operation + " failed on " + endpoint + ": " + e.getClass().getSimpleName()
                + ": " + e.getMessage(), e);
    }

    /** Builds a {@link ValkeyRateLimiter}; not thread-safe, use once. */
    public static final class Builder {
        private ValkeySettings settings;
        private UnifiedJedis client;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private LongSupplier clientClock;
        private int breakerFailures = DEFAULT_BREAKER_FAILURES;
        private Duration breakerOpenFor = DEFAULT_BREAKER_OPEN_FOR;
        private RateLimitListener listener = RateLimitListener.NONE;

        private Builder() {
        }

        /**
         * The circuit breaker: after {@code failures} consecutive failures no call is made for
         * {@code openFor}; then one probe call decides whether calls resume. Default 5 and 2 s.
         *
         * @param failures consecutive failures that open it; 0 disables the breaker
         * @param openFor  how long it stays open before a probe
         * @return this builder
         */
        public Builder circuitBreaker(int failures, Duration openFor) {
            if (failures < 0 || openFor == null || openFor.isNegative() || openFor.isZero()) {
                throw new IllegalArgumentException("circuit breaker: failures " + failures + " must be at least 0 and "
                        + "open-for " + openFor + " positive");
            }
            this.breakerFailures = failures;
            this.breakerOpenFor = openFor;
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
            this.listener = GuardedListener.of(listener);
            return this;
        }

        /**
         * Connect with these settings; the limiter owns the client and closes it.
         *
         * @param settings URL, timeouts, pool
         * @return this builder
         */
        public Builder settings(ValkeySettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
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
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * The first part of every state key. Default {@value #DEFAULT_KEY_PREFIX}.
         *
         * @param keyPrefix letters, digits, {@code :}, {@code .}, {@code _}, {@code -}; at most 64
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            Objects.requireNonNull(keyPrefix, "keyPrefix");
            if (!isValidKeyPrefix(keyPrefix)) {
                throw new IllegalArgumentException("key prefix '" + keyPrefix
                        + "' is invalid: use 1 to 64 letters, digits, ':', '.', '_' or '-'");
            }
            this.keyPrefix = keyPrefix;
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
            this.clientClock = Objects.requireNonNull(millis, "millis");
            return this;
        }

        /**
         * The limiter.
         *
         * @return a new limiter
         * @throws IllegalStateException unless exactly one of settings and client was given
         */
        public ValkeyRateLimiter build() {
            if ((settings == null) == (client == null)) {
                throw new IllegalStateException("give the builder either settings(...) or client(...), not "
                        + (settings == null ? "neither" : "both"));
            }
            return new ValkeyRateLimiter(this);
        }
    }
}
