package dev.ratelimit.servlet;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.RequestMatcher;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.config.SettingsSource;
import dev.ratelimit.resilient.ResilientRateLimiter;
import jakarta.servlet.ServletException;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * What a started filter runs on: the reading of the settings requests are decided by (replaced
 * whole by a refresh), the limiter stack built from it, the application's own limits, and the
 * refresh. {@link #start} builds them from the settings; {@link #stop} releases them.
 *
 * <p>Each part is kept as soon as it is built, so that a start that fails half-way still leaves
 * {@link #stop} able to release what was started.
 */
final class RunningFilter {

    // The filter's own logger name: operators configure the filter's logging by its class.
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    /** The settings requests are decided by, replaced whole by a refresh. */
    private volatile Active active;
    /** Whether the filter started enabled: a refresh cannot turn it on or off. */
    private boolean enabled;
    private LimiterStack stack;
    /** Requests held for a slot to come ({@code ratelimit.max-delayed-requests} read at start). */
    private DelayedRequests delayed;
    private SettingsRefresh refresh;
    /** The application's own limits ({@link LimitProvider}), or null. */
    private ProvidedLimits provided;
    /**
     * What a refreshed reading must also pass before it applies (annotated methods' rules and
     * parameters); each throws {@link IllegalStateException} naming the problem.
     */
    private final List<Consumer<FilterSettings>> readingChecks = new CopyOnWriteArrayList<>();

    /**
     * What one request is decided by: one reading of the settings, taken whole, and the filter's clock.
     *
     * @param settings the reading
     * @param keys     its keys
     * @param limiter  its decision path
     * @param clock    the time of day when Valkey's is not asked ({@link ApplicationServices#clock})
     * @param delayed  the requests held for a slot to come, the filter's for its whole run
     * @param methods  what the reading's annotated methods' rules ask of the filter
     */
    record Active(FilterSettings settings, RequestKeys keys, ResilientRateLimiter limiter, InstantSource clock,
                  DelayedRequests delayed, MethodRules methods) {

        Active(FilterSettings settings, RequestKeys keys, ResilientRateLimiter limiter, InstantSource clock,
               DelayedRequests delayed) {
            this(settings, keys, limiter, clock, delayed, MethodRules.of(settings));
        }
    }

    /**
     * What the annotated methods' rules of one reading of the settings ask of the filter: a
     * response that keeps their fields off a 3xx, and one that can hold the request for a slot.
     *
     * @param any   whether a rule has {@code scope=method}
     * @param delay whether such a rule has a {@code max-delay}
     */
    record MethodRules(boolean any, boolean delay) {

        static MethodRules of(FilterSettings settings) {
            boolean any = false;
            boolean delay = false;
            for (RuleSettings rule : settings.rules()) {
                if (rule.scope() == RuleSettings.Scope.METHOD) {
                    any = true;
                    delay |= !rule.rule().maxDelay().isZero();
                }
            }
            return new MethodRules(any, delay);
        }
    }

    /**
     * Reads and validates the settings, then starts the limiter, the application's limits and,
     * if asked for, the refresh.
     *
     * @param listener   where rate-limit events go
     * @param provider   the application's own limits, or null
     * @param clock      the application's clock: the time of day with {@code ratelimit.clock=client}
     *                   or without Valkey, and of the calendar periods the fields announce
     * @param deployment the deployment's name, for the MBeans
     * @throws ServletException when the settings are invalid (the message lists every problem)
     */
    void start(SettingsSource source, RateLimitListener listener, LimitProvider provider,
               InstantSource clock, String deployment) throws ServletException {
        FilterSettings read;
        List<String> warnings = new ArrayList<>();
        try {
            read = SettingsReader.read(source, warning -> {
                SettingsReader.warn(warning);
                warnings.add(warning);
            });
        } catch (InvalidSettingsException e) {
            throw new ServletException(e.getMessage(), e);
        }
        this.enabled = read.enabled();
        if (provider != null && read.enabled()) {
            FilterSettings.LimitProviderSettings asked = read.limitProvider();
            this.provided = new ProvidedLimits(provider, asked.cacheTtl(), asked.cacheSize(), asked.timeout(),
                    System::nanoTime);
            LOG.log(System.Logger.Level.INFO, "Rate limits come from the application''s {0} where it gives one",
                    provider.getClass().getName());
        }
        this.stack = LimiterStack.start(read, listener, clock, deployment);
        DelayedRequests held = new DelayedRequests(read.maxDelayedRequests());
        this.delayed = held;
        this.active = new Active(read, keysFor(read), stack.limiter(), clock, held);
        stack.keyOperations(this::active);
        if (read.enabled() && read.refresh().isPresent()) {
            this.refresh = SettingsRefresh.start(source, read, warnings,
                    settings -> {
                        readingChecks.forEach(check -> check.accept(settings));
                        active = new Active(settings, keysFor(settings), stack.limiterFor(settings), clock, held);
                    });
        }
    }

    /**
     * Adds a check every refreshed reading must pass to apply: one that fails it is refused whole
     * and the running settings kept, as a reading with an invalid setting is.
     *
     * @param check throws {@link IllegalStateException} naming the problem
     */
    void checkReadings(Consumer<FilterSettings> check) {
        readingChecks.add(check);
    }

    private RequestKeys keysFor(FilterSettings settings) {
        return new RequestKeys(RequestMatcher.of(settings), provided);
    }

    /**
     * Reads the settings again now, as {@code ratelimit.refresh} does on its schedule.
     *
     * @return false when no refresh runs (it is not set, or the limits are off or stopped)
     * @throws InterruptedException when interrupted while waiting
     */
    boolean refreshNow() throws InterruptedException {
        SettingsRefresh running = refresh;
        return running != null && running.readNow();
    }

    /** Whether the filter started enabled; false before a start, so an unstarted filter passes requests. */
    boolean enabled() {
        return enabled;
    }

    /** The reading the next request is decided by, taken whole. */
    Active active() {
        return active;
    }

    /**
     * Stops the refresh, the application's limits' threads and the limiter stack (connections,
     * in-process limiter, MBeans). Never throws: every part is released even if releasing another
     * one failed; a part never started is skipped.
     */
    void stop() {
        DelayedRequests held = delayed;
        if (held != null) {
            // First, while the limiter can still give their units back.
            Teardown.quietly("its delayed requests", held::stop);
        }
        SettingsRefresh running = refresh;
        if (running != null) {
            Teardown.quietly("its settings refresh", running::close);
        }
        ProvidedLimits limits = provided;
        if (limits != null) {
            Teardown.quietly("its limit provider's threads", limits::close);
        }
        LimiterStack started = stack;
        if (started != null) {
            started.stop();
        }
    }
}
