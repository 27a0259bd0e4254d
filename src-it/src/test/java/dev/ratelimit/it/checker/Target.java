package dev.ratelimit.it.checker;

import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.it.ValkeyCluster;
import dev.ratelimit.it.ValkeySentinels;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.valkey.KeyInspector;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * What a workload runs against, on the client clock the runner moves or, for a workload on the
 * server clock, on Valkey's {@code TIME} and the wall clock: the store (in-process,
 * a single Valkey, a Valkey Cluster or a primary managed by Sentinel, with the default 50 ms
 * timeouts, so a stall loses replies), and one or two limiter instances sharing it, as two application
 * servers would: each its own client, circuit breaker and lost leases, its store wrapped in a
 * {@link RecordingStore}, and optionally the resilient layer on top, built as the filter builds
 * it: per-rule policies, its own in-process fallback and deny cache on the same clock, and a new
 * decision path (going on with the replaced one's deny cache) whenever the rules are edited, as
 * a settings refresh does.
 * On a single Valkey each instance's client is the checker's own ({@link ErrorClient}), so that
 * an Error can be thrown inside it and every command it sends is recorded. On the two-JVM target
 * each instance is a limiter in a child JVM of its own ({@link ChildLimiter}), started for the
 * run, so that every JVM-wide state starts the same way in every run: its client is built there
 * alike and its faults are armed there, but what it sends is not recorded.
 */
final class Target implements AutoCloseable {

    /** Consecutive failures that open the breaker. */
    private static final int BREAKER_FAILURES = 5;
    /** How long a Sentinel run waits at its start for the sentinels to agree and the replica to be in sync. */
    private static final Duration STEADY_WAIT = Duration.ofSeconds(30);

    private final Workload workload;
    /** The client clock the runner moves; null on the server clock. */
    private final ManualClock manual;
    /**
     * The time every layer reads: the client clock, or on the server clock this machine's wall
     * clock, the clock Valkey's {@code TIME} reads (checked when the target is built), for the
     * fallback, the deny cache and the history.
     */
    private final LongSupplier clock;
    private final History history;
    private final ValkeyServer valkey;
    private final ValkeyCluster cluster;
    private final ValkeySentinels sentinels;
    /** Under Sentinel: the primary now, as the checker last saw the sentinels name it. */
    private volatile ValkeyServer primary;
    private final List<Instance> instances = new ArrayList<>();
    /** The operation each thread is running, for the events recorded beneath it. */
    private final ThreadLocal<Long> op = ThreadLocal.withInitial(() -> 0L);
    /** The instance number of an operator's calls ({@link #operator()}). */
    static final int OPERATOR = -1;
    /** The operator's limiter, made when first asked for. */
    private ValkeyRateLimiter operator;
    /** The instance every call goes to for now, or -1: calls alternate. */
    private volatile int pinned = -1;
    /** On the two-JVM target, the child JVMs, one per instance; else empty. */
    private final List<ChildLimiter> children = new ArrayList<>();

    /** One limiter instance: its own client, breaker, fallback and deny cache; the store is shared. */
    private final class Instance {
        final int index;
        final ValkeyRateLimiter valkeyLimiter;
        final ErrorClient errors;
        final RedisClient client;
        /** The limiter in a child JVM, on the two-JVM target; else null. */
        final ChildLimiter child;
        final RecordingStore store;
        final LocalRateLimiter fallback = LocalRateLimiter.withClock(clock, 100_000);
        RateLimiter top;

        Instance(int index, RateLimiter local, ChildLimiter inChild, UnaryOperator<RateLimiter> beneath) {
            this.index = index;
            if (inChild != null) {
                valkeyLimiter = null;
                errors = null;
                client = null;
                child = inChild;
            } else if (workload.valkey()) {
                child = null;
                ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                        .keyPrefix(keyPrefix())
                        .circuitBreaker(BREAKER_FAILURES, Duration.ofMillis(workload.breakerOpenMillis()));
                if (manual != null) {
                    builder.clientClock(manual);
                }
                workload.leasedRules().forEach((rule, lease) ->
                        builder.localLease(rule, lease.size(), Duration.ofMillis(lease.millis())));
                if (cluster != null) {
                    errors = null;
                    client = null;
                    builder.settings(ValkeySettings.of(cluster.seedUrl()).withCluster(true));
                } else if (sentinels != null) {
                    // The client the limiter builds itself: it asks the sentinels where the
                    // primary is, and must follow a failover on its own.
                    errors = null;
                    client = null;
                    builder.settings(sentinelSettings());
                } else {
                    errors = new ErrorClient(history, Target.this::op, clock, index);
                    client = errors.client(valkey.url());
                    builder.client(client);
                    if (!workload.pipelined()) {
                        builder.pipelines(0);
                    }
                }
                valkeyLimiter = builder.build();
            } else {
                valkeyLimiter = null;
                errors = null;
                client = null;
                child = null;
            }
            // The child's calls are recorded here as any instance's: from sending to answer.
            RateLimiter decides = child != null ? child : valkeyLimiter != null ? valkeyLimiter : local;
            store = new RecordingStore(beneath.apply(decides), history, Target.this::op, clock, index);
            top = workload.resilient() ? decisionPath() : store;
        }

        ResilientRateLimiter decisionPath() {
            ResilientRateLimiter.Builder builder = ResilientRateLimiter.builder(store)
                    .fallback(fallback)
                    .denyCache(workload.denyCache() ? ResilientRateLimiter.DEFAULT_DENY_CACHE_ENTRIES : 0)
                    .clock(clock)
                    .listener(new RateLimitListener() {
                        @Override
                        public void onEvent(String rule, Event event) {
                            if (event == Event.REFUND_DROPPED || event == Event.CHARGE_DROPPED) {
                                history.add(new dev.ratelimit.it.checker.Event.Heard(op(), clock.getAsLong(),
                                        history.real(), rule, event.name()));
                            }
                        }
                    });
            for (Rule rule : workload.rules()) {
                FailurePolicy policy = workload.policies().get(rule.name());
                if (policy != null) {
                    builder.policy(rule, policy);
                }
            }
            if (top instanceof ResilientRateLimiter replaced) {
                builder.replacing(replaced);
            }
            return builder.build();
        }

        void close() {
            try {
                // The decision path closes the store and the fallback; without it, close them here.
                top.close();
                if (!workload.resilient()) {
                    fallback.close();
                }
                if (client != null) {
                    client.close();
                }
            } finally {
                if (child != null) {
                    child.close(); // again, if the store's close did not get to it: the child is ended
                }
            }
        }
    }

    /**
     * The target of a workload.
     *
     * @param workload what will run
     * @param valkey    the server, for single Valkey targets (null otherwise)
     * @param cluster   the cluster, for cluster targets (null otherwise)
     * @param sentinels the Sentinel-managed primary and replica, for Sentinel targets (null otherwise)
     * @param history   where the store's calls are recorded
     * @param beneath   wraps the shared store beneath the recording: identity, but for a defect
     *                  a test of the checker puts there on purpose
     */
    Target(Workload workload, ValkeyServer valkey, ValkeyCluster cluster, ValkeySentinels sentinels, History history,
           UnaryOperator<RateLimiter> beneath) {
        this.workload = workload;
        this.manual = workload.serverClock() ? null : new ManualClock(workload.clockStart());
        this.clock = workload.serverClock() ? System::currentTimeMillis : manual;
        this.history = history;
        this.valkey = workload.cluster() || workload.sentinel() ? null : valkey;
        this.cluster = workload.cluster() ? cluster : null;
        this.sentinels = workload.sentinel() ? sentinels : null;
        if (this.sentinels != null) {
            // A failover of an earlier run may still be settling: this one starts on a primary
            // every sentinel names, with its replica in sync.
            this.primary = this.sentinels.awaitSteady(STEADY_WAIT);
        }
        if (workload.serverClock()) {
            // Under Sentinel both servers: either may be the primary whose TIME decides.
            for (ValkeyServer server : this.sentinels != null ? this.sentinels.servers() : servers()) {
                sameClockAs(server);
            }
        }
        // Room for every key: an evicted state would be counts forgotten.
        RateLimiter local = workload.valkey() ? null : LocalRateLimiter.withClock(clock, 100_000);
        try {
            if (workload.target().twoJvms()) {
                // Valkey without the library, whatever the runs before left (a FUNCTION FLUSH or a
                // restart drops it, other runs load it): the children's first calls load it, alike
                // in every run.
                try (Jedis jedis = valkey.connect()) {
                    jedis.functionFlush();
                }
                // Fresh JVMs for every run (and every rerun of a shrinking), started together.
                children.addAll(ChildLimiter.start(workload.instances(), new ChildLimiter.Config(valkey.url(),
                        keyPrefix(), BREAKER_FAILURES, workload.breakerOpenMillis(), manual, workload.pipelined(),
                        workload.leasedRules(), ChildLimiter.ANSWER_MILLIS)));
            }
            for (int i = 0; i < workload.instances(); i++) {
                instances.add(new Instance(i, local, children.isEmpty() ? null : children.get(i), beneath));
            }
        } catch (RuntimeException | Error e) {
            close(); // the instances built so far, and every child started
            throw e;
        }
    }

    /** The key prefix every instance of the run uses, in this JVM or the child. */
    private String keyPrefix() {
        return "ck:" + workload.seed() + ":" + workload.target().ordinal();
    }

    private long op() {
        return op.get();
    }

    /**
     * The limiter the current operation calls: the instances in turn, by operation, unless one
     * is pinned.
     *
     * @return the top of that instance's stack
     */
    RateLimiter limiter() {
        return instances.get(instance()).top;
    }

    /**
     * What an operator's command line uses: a limiter of its own on the same store (same key
     * prefix and clock; no leases, no deny cache, no fallback, no breaker), on its own connection.
     *
     * @return its inspector
     */
    KeyInspector operator() {
        return operatorLimiter().inspector();
    }

    private ValkeyRateLimiter operatorLimiter() {
        if (operator == null) {
            ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                    .keyPrefix(keyPrefix())
                    .circuitBreaker(0, Duration.ofSeconds(1)).pipelines(0);
            if (manual != null) {
                builder.clientClock(manual);
            }
            builder.settings(cluster != null ? ValkeySettings.of(cluster.seedUrl()).withCluster(true)
                    : sentinels != null ? sentinelSettings().withSocketTimeout(Duration.ofSeconds(2))
                    : ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2)));
            operator = builder.build();
        }
        return operator;
    }

    /**
     * The instance the current operation calls.
     *
     * @return its index
     */
    int instance() {
        int pin = pinned;
        return pin >= 0 ? pin : (int) (op() % instances.size());
    }

    /**
     * Sends every call to one instance (a fault meant for one breaker), or again in turn.
     *
     * @param instance the index, or -1
     */
    void pin(int instance) {
        pinned = instance;
    }

    /**
     * The time now: the client clock's, or the wall clock's on the server clock.
     *
     * @return epoch ms
     */
    long now() {
        return clock.getAsLong();
    }

    /**
     * Whether the limiter decides on Valkey's {@code TIME}.
     *
     * @return true on the server clock
     */
    boolean serverClock() {
        return manual == null;
    }

    /**
     * Moves the client clock (not on the server clock, where time passes by waiting).
     *
     * @param by ms
     */
    void advance(long by) {
        manual.advance(by);
        for (Instance instance : instances) {
            if (instance.child != null) {
                // One clock for both instances, as two servers whose clocks agree: the child's
                // moves now too, not only at its next call (its leases end by it meanwhile).
                instance.child.clockMoved();
            }
        }
    }

    /**
     * Stops the run if a child JVM of the two-JVM target broke (no answer in time, exited, a
     * request it could not read): the run cannot go on, and its history says nothing of the
     * limiter.
     *
     * @throws IllegalStateException what broke it
     */
    void checkChild() {
        for (Instance instance : instances) {
            if (instance.child != null && instance.child.broken() != null) {
                throw instance.child.broken();
            }
        }
    }

    /**
     * Valkey's {@code TIME} must be this machine's wall clock, which the history records the
     * calls' intervals on: a server elsewhere (at {@code VALKEY_URL}) with a clock of its own
     * would make every bound on the server clock wrong.
     */
    private static void sameClockAs(ValkeyServer valkey) {
        try (Jedis jedis = valkey.connect()) {
            for (int attempt = 0; attempt < 5; attempt++) {
                long before = System.currentTimeMillis();
                List<String> time = jedis.time();
                long after = System.currentTimeMillis();
                long server = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
                if (server >= before && server <= after) {
                    return;
                }
            }
        }
        throw new IllegalStateException("Valkey's TIME is not this machine's clock: the checker's server-clock runs "
                + "need a Valkey on this machine (unset VALKEY_URL, or point it at a local server)");
    }

    /**
     * Sets the operation this thread runs, for the events the store and the listener record.
     *
     * @param op the operation's number
     */
    void op(long op) {
        this.op.set(op);
    }

    /** Rules were edited: a new decision path for each instance, as a settings refresh builds one. */
    void rulesEdited() {
        if (workload.resilient()) {
            for (Instance instance : instances) {
                instance.top = instance.decisionPath();
            }
        }
    }

    /**
     * The single Valkey server, for faults.
     *
     * @return the server, or null for the in-process, cluster and Sentinel targets
     */
    ValkeyServer valkey() {
        return valkey;
    }

    /**
     * The server that takes the writes: the single one, or under Sentinel the primary now.
     *
     * @return the server, or null for the in-process and cluster targets
     */
    ValkeyServer primary() {
        return sentinels != null ? primary : valkey;
    }

    /**
     * The Sentinel topology, for its failover.
     *
     * @return the topology, or null unless a Sentinel target
     */
    ValkeySentinels sentinels() {
        return sentinels;
    }

    /**
     * After a failover: the server the sentinels name as the primary from now on, where the
     * checker's own reads (TTLs) and faults go.
     *
     * @param server the new primary
     */
    void failedOverTo(ValkeyServer server) {
        primary = server;
    }

    /**
     * How many limiter instances share the store.
     *
     * @return 1 or 2
     */
    int instances() {
        return instances.size();
    }

    /**
     * An instance's store as the resilient layer sees it, recorded: a call to it is answered by
     * the store or fails, never by a deny cache or a policy.
     *
     * @param instance the index
     * @return its recording store
     */
    RateLimiter store(int instance) {
        return instances.get(instance).store;
    }

    /**
     * The last operation whose call an instance's store answered.
     *
     * @param instance the index
     * @return its number, 0 if none
     */
    long lastAnswered(int instance) {
        return instances.get(instance).store.lastAnswered();
    }

    /** The limiter's settings under Sentinel: the URL's host is not used, the sentinels say where the primary is. */
    private ValkeySettings sentinelSettings() {
        return ValkeySettings.of("redis://sentinel-managed").withSentinel(ValkeySentinels.MASTER, sentinels.sentinelNodes());
    }

    /**
     * The cluster, for faults.
     *
     * @return the cluster, or null unless a cluster target
     */
    ValkeyCluster cluster() {
        return cluster;
    }

    /**
     * The server that holds a state key: the single one, or the cluster's primary for its slot.
     *
     * @param stateKey the key
     * @return the server
     */
    ValkeyServer serverOf(String stateKey) {
        return cluster == null ? primary() : cluster.primaryOf(JedisClusterCRC16.getSlot(stateKey));
    }

    /**
     * Every server of the store.
     *
     * @return the single one, the cluster's nodes, or under Sentinel the primary (the replica
     *         takes no writes from clients: it copies the primary's)
     */
    List<ValkeyServer> servers() {
        return cluster != null ? cluster.nodes() : List.of(primary());
    }

    /**
     * The faulty client of an instance.
     *
     * @param instance the index
     * @return its client's faults (armed in its child JVM on the two-JVM target), or null on a cluster
     */
    ClientFaults errors(int instance) {
        Instance chosen = instances.get(instance);
        return chosen.child != null ? chosen.child : chosen.errors;
    }

    /**
     * Where a rule keeps its state for a key in Valkey (the same for every instance).
     *
     * @param rule the rule
     * @param key  the key
     * @return the state key
     */
    String stateKey(Rule rule, String key) {
        ValkeyRateLimiter here = instances.get(0).valkeyLimiter;
        // With every instance in a child JVM, the operator's limiter names it (same key prefix).
        return (here != null ? here : operatorLimiter()).stateKey(rule, key);
    }

    /**
     * The failure policy of a rule, as the history records it.
     *
     * @param rule the rule's name
     * @return open, closed or local; null without the resilient layer
     */
    String policy(String rule) {
        return workload.resilient() ? workload.policies().get(rule).kind().name().toLowerCase() : null;
    }

    /**
     * The local rule of a rule whose policy is local.
     *
     * @param rule the rule's name
     * @return the local rule, or null
     */
    Rule localRule(String rule) {
        return workload.resilient() && workload.policies().get(rule) instanceof FailurePolicy.Local local
                ? local.rule() : null;
    }

    /**
     * Closes every instance, then ends every child JVM (each one, whatever another's close
     * throws: every child is always ended, also one no instance was built for), and closes the
     * operator's limiter.
     */
    @Override
    public void close() {
        RuntimeException failed = null;
        for (Instance instance : instances) {
            try {
                instance.close();
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        for (ChildLimiter child : children) {
            try {
                child.close(); // again for one an instance closed: nothing more
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (operator != null) {
            operator.close();
        }
        if (failed != null) {
            throw failed;
        }
    }
}
