package dev.ratelimit.example;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

import java.time.Duration;

/**
 * The application's metrics registry, where an application would set up its own: a Prometheus
 * registry in the servlet context attribute {@code io.micrometer.core.instrument.MeterRegistry},
 * which ratelimit-micrometer reports the filter's meters to. Nothing else is rate-limit code.
 *
 * <p>The decision timer ({@code ratelimit.decision}) is published as a histogram with the
 * buckets of {@link #DECISION_BUCKETS}, so that Prometheus can compute its percentiles across
 * instances ({@code histogram_quantile}), as the dashboard and the latency alert of
 * ratelimit-micrometer do.
 */
public class MetricsSetup implements ServletContextListener {

    /**
     * The decision time's histogram buckets: fine below a millisecond, where a healthy Valkey
     * answers, and close around the default {@code ratelimit.valkey.timeout} of 50 ms, which
     * the latency alert compares the 99th percentile with.
     */
    static final Duration[] DECISION_BUCKETS = {
        Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2),
        Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(20), Duration.ofMillis(30),
        Duration.ofMillis(40), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
    };

    /** For the container. */
    public MetricsSetup() {
    }

    @Override
    public void contextInitialized(ServletContextEvent event) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (!id.getName().equals("ratelimit.decision")) {
                    return config;
                }
                double[] nanos = new double[DECISION_BUCKETS.length];
                for (int i = 0; i < nanos.length; i++) {
                    nanos[i] = DECISION_BUCKETS[i].toNanos();
                }
                return DistributionStatisticConfig.builder().serviceLevelObjectives(nanos).build().merge(config);
            }
        });
        event.getServletContext().setAttribute(MeterRegistry.class.getName(), registry);
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        if (event.getServletContext().getAttribute(MeterRegistry.class.getName()) instanceof MeterRegistry registry) {
            registry.close();
        }
    }
}
