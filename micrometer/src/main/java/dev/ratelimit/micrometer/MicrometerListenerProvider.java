package dev.ratelimit.micrometer;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.servlet.ListenerProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import jakarta.servlet.ServletContext;

import java.util.Optional;

/**
 * Registers the filter's meters with no code: the {@link MeterRegistry} in the servlet context
 * attribute {@code io.micrometer.core.instrument.MeterRegistry} if the application put one
 * there, else Micrometer's global registry ({@link Metrics#globalRegistry}). Found by the
 * filter as a {@link java.util.ServiceLoader} service when the application set no listener of
 * its own.
 */
public final class MicrometerListenerProvider implements ListenerProvider {

    /** The servlet context attribute the filter looks in for the application's registry. */
    public static final String REGISTRY_ATTRIBUTE = MeterRegistry.class.getName();

    /** For the service loader. */
    public MicrometerListenerProvider() {
    }

    @Override
    public Optional<RateLimitListener> listenerFor(ServletContext context) {
        MeterRegistry registry = context.getAttribute(REGISTRY_ATTRIBUTE) instanceof MeterRegistry found
                ? found : Metrics.globalRegistry;
        return Optional.of(new MicrometerListener(registry));
    }
}
