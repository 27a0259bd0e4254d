package dev.ratelimit.servlet;

import dev.ratelimit.RateLimitListener;
import jakarta.servlet.ServletContext;

import java.util.Optional;

/**
 * Supplies the filter's {@link RateLimitListener} without application code: a library on the
 * class path (such as {@code ratelimit-micrometer}) registers one as a
 * {@link java.util.ServiceLoader} service, and the filter asks it when the servlet context holds
 * no listener of the application's own.
 */
@FunctionalInterface
public interface ListenerProvider {

    /**
     * The listener for an application.
     *
     * @param context the application's servlet context, where the provider may find what it
     *                needs (e.g. a metrics registry)
     * @return the listener, or empty when the provider has nothing to report to
     */
    Optional<RateLimitListener> listenerFor(ServletContext context);
}
