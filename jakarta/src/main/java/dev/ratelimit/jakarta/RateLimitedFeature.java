package dev.ratelimit.jakarta;

import dev.ratelimit.config.InvalidSettingsException;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;

import java.lang.reflect.Method;

/**
 * Binds a {@link RateLimitedFilter} to each {@link RateLimited} resource method, checking its
 * annotations against the application's settings as it does: an unknown rule or parameter
 * fails the application's start, naming the method and the value. The application's
 * {@code RateLimits} start from its MicroProfile Config at the first call, unless the servlet
 * filter started them first ({@link LazyLimits}): no {@code web.xml} entry is needed.
 *
 * <p>Register it (with {@link RateLimitExceededMapper}) in the application, or let the server
 * find both by their {@link Provider} annotation.
 */
@Provider
public class RateLimitedFeature implements DynamicFeature {

    /**
     * Where the filter runs among the request filters: after authentication (a rule keyed by
     * {@code principal} needs the user), before authorization.
     */
    static final int PRIORITY = Priorities.AUTHENTICATION + 500;

    @Context
    private ServletContext servletContext;

    /** The request in progress, a proxy Jakarta REST resolves at each call; null where there is none. */
    @Context
    private HttpServletRequest request;

    /** A feature; Jakarta REST makes it and gives it the servlet context. */
    public RateLimitedFeature() {
    }

    /**
     * A feature for one servlet context, for an application that registers instances.
     *
     * @param servletContext the application's servlet context
     * @param request        a proxy of the request in progress (as the container injects one),
     *                       or null: then only the methods' parameters key the rules
     */
    public RateLimitedFeature(ServletContext servletContext, HttpServletRequest request) {
        this.servletContext = servletContext;
        this.request = request;
    }

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        Method method = resourceInfo.getResourceMethod();
        method = method == null ? null : AnnotatedMethod.restDeclaration(method);
        if (method == null || !AnnotatedMethod.isAnnotated(method)) {
            return;
        }
        AnnotatedMethod annotated = AnnotatedMethod.of(method);
        if (servletContext == null) {
            throw new IllegalStateException("@RateLimited on " + annotated.name() + " needs a servlet container: "
                    + "RateLimitedFeature was given no ServletContext");
        }
        LazyLimits limits;
        try {
            limits = LazyLimits.checked(servletContext, reading -> annotated.check(reading, true));
        } catch (InvalidSettingsException | ServletException e) {
            throw new IllegalStateException("@RateLimited on " + annotated.name() + ": " + e.getMessage(), e);
        }
        context.register(new RateLimitedFilter(limits, annotated, request), PRIORITY);
    }
}
