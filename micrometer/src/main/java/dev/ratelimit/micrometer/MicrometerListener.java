package dev.ratelimit.micrometer;

import dev.ratelimit.RateLimitListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The filter's events as Micrometer meters. Tags are the rule's name and the outcome only,
 * never a key, so the number of series is bounded by the rules configured.
 *
 * <ul>
 *   <li>{@code ratelimit.decisions} (counter), tags {@code rule} and {@code outcome}: one of
 *       {@code allowed}, {@code rejected}, {@code shadow_rejected}, {@code store_error},
 *       {@code fallback}, {@code deny_cache_hit} (also counted as {@code rejected}),
 *       {@code refunded}, {@code refund_dropped}, {@code charged}, {@code charge_dropped},
 *       {@code delayed} (also counted as {@code allowed}), {@code lease_hit} (served by a local
 *       lease with no call to Valkey for the rule, also counted as {@code allowed});</li>
 *   <li>{@code ratelimit.near.limit} (counter), tag {@code rule}: allowed requests with 80 % or
 *       more of the quota used ({@code ratelimit.metrics.near-limit-ratio});</li>
 *   <li>{@code ratelimit.decision} (timer), tag {@code rule}: the time the store took to decide,
 *       with the percentiles given to {@link #MicrometerListener(MeterRegistry, double...)}
 *       (none by default) and a histogram when the registry is asked for one;</li>
 *   <li>{@code ratelimit.delay} (timer), tag {@code rule}: how long delayed requests waited for
 *       their slot ({@code max-delay});</li>
 *   <li>{@code ratelimit.breaker.open} (gauge): 1 while the circuit breaker in front of Valkey
 *       is open, else 0.</li>
 * </ul>
 *
 * <p>From code: {@code servletContext.setAttribute(RateLimitListener.class.getName(), new
 * MicrometerListener(registry))} before the filter starts. With no code, the JAR on the class
 * path finds the registry itself ({@link MicrometerListenerProvider}).
 */
public final class MicrometerListener implements RateLimitListener {

    private static final int EVENTS = Event.values().length;

    private final MeterRegistry registry;
    private final double[] percentiles;
    /** Per rule, its counters by event (NEAR_LIMIT's is {@code ratelimit.near.limit}), made when first counted. */
    private final Map<String, AtomicReferenceArray<Counter>> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final AtomicInteger breakerOpen = new AtomicInteger();
    private final Gauge breakerGauge;

    /**
     * Meters in a registry.
     *
     * @param registry    where the meters go
     * @param percentiles the decision timer's published percentiles, e.g. {@code 0.5, 0.99};
     *                    none for a plain timer
     */
    public MicrometerListener(MeterRegistry registry, double... percentiles) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.percentiles = percentiles.clone();
        // Micrometer's own function and a weak reference: a registry that outlives the
        // application (a container's) keeps nothing of its classes.
        registry.gauge("ratelimit.breaker.open", Tags.empty(), breakerOpen);
        this.breakerGauge = registry.find("ratelimit.breaker.open").gauge();
    }

    @Override
    public void onEvent(String rule, Event event) {
        // Called several times per request: one lookup by the rule's name, nothing allocated.
        AtomicReferenceArray<Counter> ofRule = counters.computeIfAbsent(rule,
                r -> new AtomicReferenceArray<>(EVENTS));
        Counter counter = ofRule.get(event.ordinal());
        if (counter == null) {
            // Micrometer gives the same counter to both threads of a race.
            counter = register(rule, event);
            ofRule.set(event.ordinal(), counter);
        }
        counter.increment();
    }

    private Counter register(String rule, Event event) {
        if (event == Event.NEAR_LIMIT) {
            return Counter.builder("ratelimit.near.limit").tag("rule", rule)
                    .description("Allowed requests with little of the quota left").register(registry);
        }
        return Counter.builder("ratelimit.decisions").tag("rule", rule)
                .tag("outcome", event.name().toLowerCase(Locale.ROOT))
                .description("Rate-limit decisions per rule and outcome").register(registry);
    }

    @Override
    public void onDecisionTime(String rule, long nanos) {
        timers.computeIfAbsent(rule, r -> Timer.builder("ratelimit.decision").tag("rule", r)
                .description("Time the store took to decide").publishPercentiles(percentiles).register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void onDelay(String rule, long nanos) {
        timers.computeIfAbsent(rule + " delay", r -> Timer.builder("ratelimit.delay").tag("rule", rule)
                .description("Time delayed requests waited for their slot").register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Removes every meter this listener registered: a redeployed application starts afresh. */
    @Override
    public void onClose() {
        for (AtomicReferenceArray<Counter> ofRule : counters.values()) {
            for (int i = 0; i < ofRule.length(); i++) {
                Meter meter = ofRule.get(i);
                if (meter != null) {
                    registry.remove(meter);
                }
            }
        }
        for (Meter meter : timers.values()) {
            registry.remove(meter);
        }
        if (breakerGauge != null) {
            registry.remove(breakerGauge);
        }
        counters.clear();
        timers.clear();
    }

    @Override
    public void onBreakerChange(boolean open) {
        breakerOpen.set(open ? 1 : 0);
    }
}
