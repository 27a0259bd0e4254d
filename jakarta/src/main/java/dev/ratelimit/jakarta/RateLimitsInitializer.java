package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.RateLimits;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

import java.util.Set;

/**
 * Stops the application's {@link RateLimits} (Valkey connections, MBeans, refresh) when the
 * application stops, whoever started them: with no filter registered, nothing else would. Found
 * by the container through {@code META-INF/services}, as every servlet container finds a
 * library's initializer; no {@code web.xml} entry.
 */
public class RateLimitsInitializer implements ServletContainerInitializer {

    /** An initializer; the container makes it. */
    public RateLimitsInitializer() {
    }

    @Override
    public void onStartup(Set<Class<?>> classes, ServletContext context) {
        LazyLimits.starting(context);
        context.addListener(new Stopper());
    }

    /** Stops the limits with the application. */
    static final class Stopper implements ServletContextListener {

        @Override
        public void contextDestroyed(ServletContextEvent event) {
            // Limits not started yet never start now: a start after the stop would leave them running.
            LazyLimits.stopping(event.getServletContext());
            RateLimits.stop(event.getServletContext());
        }
    }
}
