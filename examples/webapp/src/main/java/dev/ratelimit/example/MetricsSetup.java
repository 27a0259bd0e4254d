package dev.ratelimit.example;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

/**
 * The application's metrics registry, where an application would set up its own: a Prometheus
 * registry in the servlet context attribute {@code io.micrometer.core.instrument.MeterRegistry},
 * which ratelimit-micrometer reports the filter's meters to. Nothing else is rate-limit code.
 */
public class MetricsSetup implements ServletContextListener {

    /** For the container. */
    public MetricsSetup() {
    }

    @Override
    public void contextInitialized(ServletContextEvent event) {
        event.getServletContext().setAttribute(MeterRegistry.class.getName(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        if (event.getServletContext().getAttribute(MeterRegistry.class.getName()) instanceof MeterRegistry registry) {
            registry.close();
        }
    }
}
