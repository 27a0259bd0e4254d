package dev.ratelimit.valkey;

import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.Claim;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.internal.KeyValues;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.GuardedListener;
import dev.ratelimit.internal.Verdicts;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

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
     * are in flight go together in the next one.
     */
    public static final int DEFAULT_PIPELINES = 8;

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9:._-]{1,64}");
    private static final int ARGS_PER_RULE = 7;
    private static final String SERVER_CLOCK = "-1";
    /** Call numbers stay below 2^53, exact in Lua's numbers. */
    private static final long MAX_CALL_NUMBER = 1L << 53;

    private final UnifiedJedis client;
    private final boolean ownsClient;
    /** On a cluster, claims whose keys hash to different slots cannot share one function call. */
    private final boolean cluster;
    private final String keyPrefix;
    private final LongSupplier clientClock;
    private final String endpoint;
    private final CircuitBreaker breaker;
    private final LimiterScript script = LimiterScript.load();
    private final GuardedCalls calls;
    private final LostLeases lostLeases = new LostLeases(System::nanoTime);
    /** How a function call is sent: on its own, or with other threads' in a pipeline. */
    private final LimiterScript.FunctionCalls functionCalls;

    private ValkeyRateLimiter(Builder builder) {
        if (builder.client != null) {
            this.client = builder.client;
            this.ownsClient = false;
            this.endpoint = "Valkey";
        } else {
            if (!builder.settings.cluster() && builder.settings.sentinel().isEmpty()) {
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
        ValkeySettings bounds = builder.settings != null ? builder.settings : ValkeySettings.of("redis://localhost");
        this.calls = new GuardedCalls(endpoint, breaker, cluster ? bounds.socketTimeout() : Duration.ZERO,
                claim -> stateKey(claim.rule(), claim.key()));
        // A cluster pipeline cannot follow a redirection; each cluster call is sent on its own.
        if (builder.pipelines == 0 || cluster) {
            this.functionCalls = client::fcall;
        } else {
            long maxWait = bounds.connectTimeout().plus(bounds.poolMaxWait()).plus(bounds.socketTimeout()).toNanos();
            this.functionCalls = new PipelinedCalls(client, builder.pipelines, maxWait)::fcall;
        }
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
        return take(claims).decisions();
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
        SlotGroups.Outcome taken = take(claims);
        return reservation(claims, taken.answers(), taken.decisions());
    }

    /** The acquiring call(s): every claim's answer, to give back, and the request's decisions. */
    private SlotGroups.Outcome take(List<Claim> claims) {
        Claims.check(claims);
        // Before deciding, so that this request already finds the slots they held free.
        releaseLostLeases();
        String now = now();
        if (cluster) {
            List<List<Integer>> groups = SlotGroups.of(claims, claim -> stateKey(claim.rule(), claim.key()));
            if (groups.size() > 1) {
                SlotGroups.Outcome outcome = SlotGroups.acquire(claims, groups,
                        (group, mode) -> callForAnswers(group, mode, now), this::giveBackQuietly);
                if (!outcome.decisions().allowed()) {
                    giveBackRaced(claims, outcome.answers());
                }
                return outcome;
            }
        }
        List<Verdicts.Answer> answers = callForAnswers(claims, ScriptMode.ACQUIRE, now);
        return new SlotGroups.Outcome(Verdicts.combine(claims, answers, false), answers);
    }

    private Reservation reservation(List<Claim> claims, List<Verdicts.Answer> answers, Decisions decisions) {
        if (!decisions.allowed()) {
            return Reservation.kept(decisions);
        }
        return Reservation.of(decisions, which -> giveBack(claims, answers, Verdicts.toGiveBack(claims, answers, which)));
    }

    /** A cluster request rejected by one group after others took units: those go back, best effort. */
    private void giveBackRaced(List<Claim> claims, List<Verdicts.Answer> answers) {
        List<Integer> taken = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            if (answers.get(i).took() && !claims.get(i).rule().countRejected()) {
                taken.add(i);
            }
        }
        giveBackQuietly(SlotGroups.subList(claims, taken), taken.stream().map(answers::get).toList());
    }

    /**
     * Gives back what claims of a request that was not allowed took, best effort: the request is
     * answered either way, units that stay counted expire with their window, and leases that
     * could not be released are released later ({@link LostLeases}).
     */
    private void giveBackQuietly(List<Claim> claims, List<Verdicts.Answer> answers) {
        try {
            refund(claims, answers, true);
        } catch (RateLimitException e) {
            // Counted until their window or refill frees them, which errs on the side of the limit.
        }
    }

    /** Gives back the units of the given claims; the names of the rules that gave any back. */
    private List<String> giveBack(List<Claim> claims, List<Verdicts.Answer> answers, List<Integer> indexes) {
        if (indexes.isEmpty()) {
            return List.of();
        }
        List<Claim> back = SlotGroups.subList(claims, indexes);
        boolean[] given = refund(back, indexes.stream().map(answers::get).toList(), true);
        List<String> rules = new ArrayList<>();
        for (int i = 0; i < back.size(); i++) {
            if (given[i]) {
                rules.add(back.get(i).rule().name());
            }
        }
        return rules;
    }

    /**
     * One refund call per slot group: for each claim, whether it gave anything back. When a
     * group's call fails and {@code rememberLeases}, the leases of that group and of the groups
     * not yet called are remembered, to be released once Valkey answers again.
     */
    private boolean[] refund(List<Claim> back, List<Verdicts.Answer> undo, boolean rememberLeases) {
        boolean[] given = new boolean[back.size()];
        List<List<Integer>> groups = cluster ? SlotGroups.of(back, claim -> stateKey(claim.rule(), claim.key()))
                : List.of(allIndexes(back.size()));
        String now = now();
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> group = groups.get(g);
            List<String> keys = new ArrayList<>(group.size());
            List<String> args = new ArrayList<>(1 + ARGS_PER_RULE * group.size());
            args.add(now);
            List<Claim> claimsOfGroup = new ArrayList<>(group.size());
            for (int j : group) {
                Claim claim = back.get(j);
                claimsOfGroup.add(claim);
                keys.add(stateKey(claim.rule(), claim.key()));
                addRuleArgs(args, claim);
                args.add(Long.toString(undo.get(j).undoA()));
                args.add(Long.toString(undo.get(j).undoB()));
            }
            try {
                Object reply = calls.run("refund", claimsOfGroup,
                        () -> script.run(client, functionCalls, script.refundName(), keys, args));
                List<Boolean> ofGroup = calls.givenBack(claimsOfGroup, reply);
                for (int j = 0; j < group.size(); j++) {
                    given[group.get(j)] = ofGroup.get(j);
                }
            } catch (RateLimitException e) {
                for (List<Integer> unsent : rememberLeases ? groups.subList(g, groups.size()) : List.<List<Integer>>of()) {
                    for (int j : unsent) {
                        lostLeases.remember(back.get(j), undo.get(j).undoA());
                    }
                }
                throw e;
            }
        }
        return given;
    }

    /**
     * Releases the leases that calls whose replies were lost may hold, or whose release failed
     * (see {@link LostLeases}): one refund call, at most every 100 ms and only while there are
     * any; a failure leaves them for a later try.
     */
    private void releaseLostLeases() {
        List<LostLeases.Lease> due = lostLeases.due();
        if (due.isEmpty()) {
            return;
        }
        List<Claim> claims = due.stream().map(LostLeases.Lease::claim).toList();
        List<Verdicts.Answer> undo = due.stream().map(lease -> new Verdicts.Answer(true, 0, 0, 0, 0, lease.call(), 0))
                .toList();
        boolean[] released = null;
        try {
            released = refund(claims, undo, false);
        } catch (RateLimitException e) {
            // Valkey failed again: they are tried once more after a later answer.
        }
        lostLeases.tried(due, released);
    }

    private static List<Integer> allIndexes(int size) {
        List<Integer> indexes = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            indexes.add(i);
        }
        return indexes;
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        return call(List.of(Claim.of(rule, key, cost)), ScriptMode.PEEK, now()).decisions().get(0);
    }

    private String now() {
        return clientClock == null ? SERVER_CLOCK : Long.toString(clientClock.getAsLong());
    }

    @Override
    public void reset(Rule rule, String key) {
        Claim.of(rule, key); // the same argument checks as every other call
        calls.run("reset", List.of(), () -> client.del(stateKey(rule, key)));
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

    private Decisions call(List<Claim> claims, ScriptMode mode, String now) {
        return Verdicts.combine(claims, callForAnswers(claims, mode, now), false);
    }

    /**
     * One function call. Its number names the leases it takes: when an acquiring call fails
     * with nothing known of what Valkey did (a lost reply), they are remembered to be released.
     */
    private List<Verdicts.Answer> callForAnswers(List<Claim> claims, ScriptMode mode, String now) {
        long call = ThreadLocalRandom.current().nextLong(1, MAX_CALL_NUMBER);
        List<String> keys = new ArrayList<>(claims.size());
        List<String> args = new ArrayList<>(3 + ARGS_PER_RULE * claims.size());
        args.add(now);
        args.add(mode.argument());
        args.add(Long.toString(call));
        for (Claim claim : claims) {
            Rule rule = claim.rule();
            keys.add(stateKey(rule, claim.key()));
            addRuleArgs(args, claim);
            args.add(rule.countRejected() ? "1" : "0");
            args.add(rule.shadow() ? "1" : "0");
        }
        try {
            Object reply = calls.run(mode == ScriptMode.PEEK ? "peek" : "acquire", claims,
                    () -> script.run(client, functionCalls, keys, args));
            return calls.answers(claims, reply);
        } catch (UnreadableStateException | GuardedCalls.NotAttempted e) {
            throw e; // refused before anything was written, or never sent
        } catch (RateLimitException e) {
            if (mode == ScriptMode.ACQUIRE) {
                for (Claim claim : claims) {
                    lostLeases.remember(claim, call);
                }
            }
            throw e;
        }
    }

    /** The five values every function call takes first for a rule: algorithm, limit, window, burst, cost. */
    private static void addRuleArgs(List<String> args, Claim claim) {
        Rule rule = claim.rule();
        args.add(rule.algorithm().id());
        args.add(Long.toString(rule.limit()));
        args.add(Long.toString(rule.window().toMillis()));
        args.add(Long.toString(rule.burst()));
        args.add(Long.toString(claim.cost()));
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
        private int pipelines = DEFAULT_PIPELINES;

        private Builder() {
        }

        /**
         * Sending concurrent decisions together. At most {@code pipelines} calls or pipelines are
         * on the wire at once; a thread that arrives while they all are queues its call, and the
         * next free thread sends every queued call in one pipeline on one connection. One round
         * trip then carries many decisions, which is most of the cost of each on both the client
         * and the server. A call that is alone is sent on its own, as without pipelining. A
         * queued call waits at most the connect timeout, the pool wait and the socket timeout
         * of the settings together (120 ms by default, and for a {@link #client given client}),
         * in the queue and on the wire together, and then fails like a timeout; so does the
         * thread that sends its pipeline, unless the given client is neither a
         * {@code RedisClient} nor a {@code RedisSentinelClient}: that thread then waits for
         * the replies as the client's own timeouts say. Not used on a cluster, where every call
         * is sent on its own. Default {@value #DEFAULT_PIPELINES}.
         *
         * @param pipelines at most this many on the wire at once, 1 to 64; 0 sends every call
         *                  on its own pooled connection
         * @return this builder
         */
        public Builder pipelines(int pipelines) {
            if (pipelines < 0 || pipelines > 64) {
                throw new IllegalArgumentException("pipelines " + pipelines + " must be between 0 and 64");
            }
            this.pipelines = pipelines;
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
