package dev.ratelimit.servlet;

import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.metrics.Metrics;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.KeyInspector;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * What the filter decides with, built from its settings: the shared limiter (Valkey, or the
 * in-process one when no Valkey is configured), wrapped in the {@link ResilientRateLimiter}
 * that applies each rule's on-failure policy, the deny cache and the metrics; and the metrics'
 * MBeans. The filter itself only does HTTP.
 */
final class LimiterStack {

    private static final System.Logger LOG = System.getLogger(LimiterStack.class.getName());

    private final RateLimiter shared;
    /** The Valkey limiter once connected; null with no Valkey, or none reached yet. */
    private final AtomicReference<ValkeyRateLimiter> valkey;
    private final LocalRateLimiter fallback;
    private final Metrics metrics;
    private final ResilientRateLimiter limiter;
    /** Told of each reading's rules, for the long ones' persistence question. */
    private final PersistenceWarning persistence;
    /** The application's clock: the deny cache's too, so that its holds and the decisions share one time. */
    private final InstantSource clock;
    /** The latest decision path: the next one goes on with its deny cache. */
    private ResilientRateLimiter latest;

    private LimiterStack(RateLimiter shared, AtomicReference<ValkeyRateLimiter> valkey, LocalRateLimiter fallback,
                         Metrics metrics, PersistenceWarning persistence, FilterSettings settings,
                         InstantSource clock) {
        this.shared = shared;
        this.clock = clock;
        this.persistence = persistence;
        this.valkey = valkey;
        this.fallback = fallback;
        this.metrics = metrics;
        this.limiter = limiterFor(settings);
    }

    /**
     * Builds and connects everything the settings ask for, and registers the MBeans.
     *
     * @param settings the filter's settings
     * @param listener the application's listener
     * @param clock    the application's clock: the time of day of the client clock, the fallback and
     *                 an in-process limiter
     * @param deployment the deployment (virtual server and context path), for its MBean names
     * @return the stack
     */
    static LimiterStack start(FilterSettings settings, RateLimitListener listener, InstantSource clock,
                              String deployment) {
        List<String> names = settings.rules().stream().map(r -> r.rule().name()).toList();
        LocalRateLimiter fallback = LocalRateLimiter.withClock(clock::millis, settings.localMaxKeys());
        AtomicReference<ValkeyRateLimiter> valkey = new AtomicReference<>();
        PersistenceWarning persistence = new PersistenceWarning();
        Metrics metrics = new Metrics(names, () -> valkey.get() != null && valkey.get().isBreakerOpen(), listener,
                deployment);
        RateLimiter shared;
        if (!settings.enabled()) {
            LOG.log(System.Logger.Level.INFO, "Rate limiting is disabled (ratelimit.enabled=false)");
            shared = LocalRateLimiter.create(1);
        } else if (settings.valkey().isPresent()) {
            shared = connect(settings, clock, metrics, names, limiter -> {
                valkey.set(limiter);
                persistence.connected(limiter);
            });
        } else {
            shared = LocalRateLimiter.withClock(clock::millis, settings.localMaxKeys());
            LOG.log(System.Logger.Level.WARNING, "Rate limiting {0} IN THIS PROCESS ONLY: ratelimit.valkey.url is "
                    + "not set, so each instance of the application enforces the limits on its own", names);
        }
        metrics.registerMBeans();
        return new LimiterStack(shared, valkey, fallback, metrics, persistence, settings, clock);
    }

    /**
     * A decision path for these settings' rules (their failure policies) on this stack's
     * connections, fallback and deny cache: how a refresh of the settings applies new rules.
     * Replaced decision paths need no closing: they own nothing. The deny cache goes on from
     * path to path, so that a request still in progress across a refresh, giving its units
     * back, clears the rejections the new path remembers.
     *
     * @param settings the settings, read at start-up or by a refresh
     * @return the decision path
     */
    synchronized ResilientRateLimiter limiterFor(FilterSettings settings) {
        metrics.addRules(settings.rules().stream().map(r -> r.rule().name()).toList());
        persistence.rules(settings);
        ResilientRateLimiter.Builder builder = ResilientRateLimiter.builder(shared).fallback(fallback)
                .denyCache(settings.denyCacheSize()).denyCacheHold(settings.denyCacheHold()).failureRetryAfter(settings.failureRetryAfter())
                .nearLimitRatio(settings.nearLimitRatio()).listener(metrics).clock(clock::millis);
        for (RuleSettings rule : settings.rules()) {
            builder.policy(rule.rule(), rule.failurePolicy());
        }
        if (latest != null) {
            builder.replacing(latest);
        }
        latest = builder.build();
        return latest;
    }

    /**
     * The Valkey limiter. A cluster or Sentinel client connects while being built, to learn
     * where the primaries are: when none answers, the start goes on as with a standalone Valkey
     * that is down, the rules' policies answering until one does ({@link ConnectingStore}).
     */
    private static RateLimiter connect(FilterSettings settings, InstantSource clock, Metrics metrics,
                                       List<String> names,
                                       Consumer<ValkeyRateLimiter> connected) {
        ValkeySettings valkey = settings.valkey().orElseThrow();
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder().settings(valkey).keyPrefix(settings.keyPrefix())
                .pipelines(settings.pipelines())
                .circuitBreaker(settings.breakerFailures(), settings.breakerOpenFor()).listener(metrics);
        for (RuleSettings rule : settings.rules()) {
            if (rule.localLease() > 0) {
                builder.localLease(rule.rule(), rule.localLease(), rule.localLeaseTime());
            }
        }
        if (settings.clientClock()) {
            builder.clientClock(clock::millis);
        }
        LOG.log(System.Logger.Level.INFO, "Rate limiting {0} on {1}", names, valkey.redactedUrl());
        return ConnectingStore.start(builder::build, connected, valkey.cluster()
                ? "the Valkey Cluster at " + valkey.redactedUrl() + " (to learn its slots)"
                : "the sentinels of " + valkey.redactedUrl() + " (to learn the primary)");
    }

    /**
     * Gives the rules' MBeans their {@code inspect} and {@code reset} operations.
     *
     * @param active the settings requests are decided by now
     */
    void keyOperations(java.util.function.Supplier<RunningFilter.Active> active) {
        metrics.keyOperations(new OperatorConsole(active, this::inspector));
    }

    /**
     * What reads the rules' state in Valkey for an operator.
     *
     * @return the inspector, or null when the rules are kept in process
     * @throws RateLimitException when Valkey has not been reached yet
     */
    private KeyInspector inspector() {
        ValkeyRateLimiter connected = valkey.get();
        if (connected != null) {
            return connected.inspector();
        }
        if (shared instanceof ConnectingStore) {
            throw new RateLimitException("Valkey not reached yet", null);
        }
        return null;
    }

    /** The decision path for the settings the stack was started with. */
    ResilientRateLimiter limiter() {
        return limiter;
    }

    /**
     * Unregisters the MBeans, tells the listener, closes the limiters; each step even if another
     * fails, none throws.
     */
    void stop() {
        Teardown.quietly("its JMX MBeans", metrics::unregisterMBeans);
        Teardown.quietly("its listener", metrics::onClose);
        Teardown.quietly("its Valkey connections", shared::close);
        Teardown.quietly("its in-process limiter", fallback::close);
    }
}
