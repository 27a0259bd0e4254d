package dev.ratelimit.example;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/** {@code GET /metrics}: the registry of {@link MetricsSetup} in Prometheus's text format. */
public class MetricsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!(getServletContext().getAttribute(MeterRegistry.class.getName()) instanceof PrometheusMeterRegistry registry)) {
            response.sendError(HttpServletResponse.SC_SERVICE_UNAVAILABLE, "no Prometheus registry");
            return;
        }
        response.setContentType("text/plain; version=0.0.4; charset=utf-8");
        response.getWriter().write(registry.scrape());
    }
}
