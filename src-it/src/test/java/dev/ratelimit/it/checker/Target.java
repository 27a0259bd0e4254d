package dev.ratelimit.it.checker;

import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a workload runs against, on the client clock the runner moves: the store (in-process,
 * or Valkey in client-clock mode with the default 50 ms timeouts, so a stall loses replies),
 * wrapped in a {@link RecordingStore}, and optionally the resilient layer on top, built as the
 * filter builds it: per-rule policies, the in-process fallback on the same clock, the deny
 * cache on the same clock, and a new decision path (a new deny cache) whenever the rules are
 * edited, as a settings refresh does.
 */
final class Target implements AutoCloseable {

    /** Consecutive failures that open the breaker; it stays open briefly so a run goes on. */
    private static final int BREAKER_FAILURES = 5;
    private static final Duration BREAKER_OPEN_FOR = Duration.ofMillis(300);

    private final Workload workload;
    private final ManualClock clock;
    private final History history;
    private final ValkeyServer valkey;
    private final ValkeyRateLimiter valkeyLimiter;
    private final RecordingStore store;
    private final LocalRateLimiter fallback;
    private long op;
    private RateLimiter top;

    /**
     * The target of a workload.
     *
     * @param workload what will run
     * @param valkey   the server, for Valkey targets (null otherwise)
     * @param history  where the store's calls are recorded
     * @param beneath  wraps the shared store beneath the recording: identity, but for a defect
     *                 a test of the checker puts there on purpose
     */
    Target(Workload workload, ValkeyServer valkey, History history, UnaryOperator<RateLimiter> beneath) {
        this.workload = workload;
        this.clock = new ManualClock(workload.clockStart());
        this.history = history;
        this.valkey = valkey;
        RateLimiter shared;
        if (workload.valkey()) {
            valkeyLimiter = ValkeyRateLimiter.builder()
                    .settings(ValkeySettings.of(valkey.url()))
                    .keyPrefix("ck:" + workload.seed() + ":" + workload.target().ordinal())
                    .clientClock(clock)
                    .circuitBreaker(BREAKER_FAILURES, BREAKER_OPEN_FOR)
                    .build();
            shared = valkeyLimiter;
        } else {
            valkeyLimiter = null;
            // Room for every key: an evicted state would be counts forgotten.
            shared = LocalRateLimiter.withClock(clock, 100_000);
        }
        this.store = new RecordingStore(beneath.apply(shared), history, () -> op, clock);
        this.fallback = LocalRateLimiter.withClock(clock, 100_000);
        this.top = workload.resilient() ? decisionPath() : store;
    }

    private ResilientRateLimiter decisionPath() {
        ResilientRateLimiter.Builder builder = ResilientRateLimiter.builder(store)
                .fallback(fallback)
                .denyCache(workload.denyCache() ? ResilientRateLimiter.DEFAULT_DENY_CACHE_ENTRIES : 0)
                .clock(clock)
                .listener(new RateLimitListener() {
                    @Override
                    public void onEvent(String rule, Event event) {
                        if (event == Event.REFUND_DROPPED) {
                            history.add(new dev.ratelimit.it.checker.Event.Heard(op, clock.getAsLong(),
                                    history.real(), rule, event.name()));
                        }
                    }
                });
        for (Map.Entry<String, FailurePolicy> policy : workload.policies().entrySet()) {
            builder.policy(policy.getKey(), policy.getValue());
        }
        return builder.build();
    }

    /**
     * The limiter the workload calls.
     *
     * @return the top of the stack
     */
    RateLimiter limiter() {
        return top;
    }

    /**
     * The client clock.
     *
     * @return the clock every decision reads
     */
    ManualClock clock() {
        return clock;
    }

    /**
     * Sets the operation being run, for the events the store and the listener record.
     *
     * @param op the operation's number
     */
    void op(long op) {
        this.op = op;
    }

    /** Rules were edited: a new decision path, as a settings refresh builds one. */
    void rulesEdited() {
        if (workload.resilient()) {
            top = decisionPath();
        }
    }

    /**
     * The Valkey server, for faults.
     *
     * @return the server, or null for the in-process targets
     */
    ValkeyServer valkey() {
        return valkey;
    }

    /**
     * Where a rule keeps its state for a key in Valkey.
     *
     * @param rule the rule
     * @param key  the key
     * @return the state key
     */
    String stateKey(Rule rule, String key) {
        return valkeyLimiter.stateKey(rule, key);
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
        return workload.resilient() ? workload.policies().get(rule).localRule() : null;
    }

    @Override
    public void close() {
        // The decision path closes the store and the fallback; without it, close them here.
        top.close();
        if (!workload.resilient()) {
            fallback.close();
        }
    }
}
