package dev.ratelimit.jakarta;

import dev.ratelimit.config.InvalidSettingsException;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Feature;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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
public class RateLimitedFeature implements DynamicFeature, Feature {

    /**
     * Where the filter runs among the request filters: after authentication (a rule keyed by
     * {@code principal} needs the user), before authorization.
     */
    static final int PRIORITY = Priorities.AUTHENTICATION + 500;

    @Context
    private ServletContext servletContext;

    /** The resource classes whose sub-resources were checked: each once. */
    private final Set<Class<?>> walked = new HashSet<>();

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

    /**
     * At the application's start, before any resource method is configured: checks what lies
     * under its root resources' locators (a root resource with locators only has no method of
     * its own to be configured for).
     *
     * @param context the application's configuration
     * @return true: the feature stays enabled
     */
    @Override
    public boolean configure(FeatureContext context) {
        if (!context.getConfiguration().isRegistered(RateLimitExceededMapper.class)) {
            // A CDI method's refusal under a Jakarta REST request is answered as the filter's 429, not a 500.
            context.register(RateLimitExceededMapper.class);
        }
        List<Class<?>> roots = new ArrayList<>(context.getConfiguration().getClasses());
        context.getConfiguration().getInstances().forEach(instance -> roots.add(instance.getClass()));
        for (Class<?> root : roots) {
            if (root.isAnnotationPresent(Path.class)) {
                checkSubResources(root);
            }
        }
        return true;
    }

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        Method invoked = resourceInfo.getResourceMethod();
        Method method = invoked == null ? null : AnnotatedMethod.restDeclaration(invoked);
        if (method == null) {
            return;
        }
        checkSubResources(resourceInfo.getResourceClass());
        if (!AnnotatedMethod.isAnnotated(method)) {
            // The fields of a CDI method's rules it may call.
            context.register(new AccountFields(request), PRIORITY);
            return;
        }
        AnnotatedMethod annotated = AnnotatedMethod.of(method);
        context.register(new RateLimitedFilter(checked(annotated), annotated, invoked, request), PRIORITY);
    }

    /**
     * Checks an annotated method against the settings now, and every reading a refresh makes.
     *
     * @throws IllegalStateException naming the method and the problem, for the deployment's failure
     */
    private LazyLimits checked(AnnotatedMethod annotated) {
        if (servletContext == null) {
            throw new IllegalStateException("@RateLimited on " + annotated.name() + " needs a servlet container: "
                    + "RateLimitedFeature was given no ServletContext");
        }
        try {
            return LazyLimits.checked(servletContext, reading -> annotated.check(reading, true));
        } catch (InvalidSettingsException | ServletException e) {
            throw new IllegalStateException("@RateLimited on " + annotated.name() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Checks, once per class, what lies under a resource's sub-resource locators: Jakarta REST
     * configures a sub-resource's methods at the first request that reaches them, and a wrong
     * annotation there must fail the deployment, not that request. A {@link RateLimited} on a
     * locator fails it too: no filter sees a locator.
     */
    private void checkSubResources(Class<?> resource) {
        if (resource == null) {
            return;
        }
        SubResources.Found found;
        synchronized (walked) {
            if (walked.contains(resource)) {
                return;
            }
            found = SubResources.under(resource, walked);
        }
        for (Method locator : found.locators()) {
            Method declared = AnnotatedMethod.declaration(locator, AnnotatedMethod::ownAnnotation);
            if (AnnotatedMethod.ownAnnotation(declared)) {
                checked(AnnotatedMethod.of(declared));
            }
        }
        for (Method reached : found.resourceMethods()) {
            Method declared = AnnotatedMethod.restDeclaration(reached);
            if (AnnotatedMethod.isAnnotated(declared)) {
                checked(AnnotatedMethod.of(declared));
            }
        }
    }
}
