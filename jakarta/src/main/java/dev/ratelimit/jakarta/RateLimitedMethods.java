package dev.ratelimit.jakarta;

import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.servlet.MethodDecision;
import dev.ratelimit.servlet.RateLimits;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.interceptor.InvocationContext;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link RateLimited} CDI methods of one application: started with its servlet context (which
 * a Jakarta EE server gives as the payload of the {@code @Initialized(ApplicationScoped.class)}
 * event of a web application, or the application by {@link #start}), each call decided by the
 * application's {@link RateLimits} before the method runs.
 */
@ApplicationScoped
public class RateLimitedMethods {

    /** The invocation's context data key marking it decided: one decision for a chain of interceptors. */
    private static final String DECIDED = RateLimitedMethods.class.getName() + ".decided";

    private final Map<Method, AnnotatedMethod> methods = new ConcurrentHashMap<>();
    private volatile LazyLimits limits;

    /** The methods checked against the settings: those the extension found, then any seen late. */
    private final Set<Method> checked = ConcurrentHashMap.newKeySet();

    /** The servlet context of the start event, kept for a start at the first call. */
    private volatile ServletContext application;

    @Inject
    RateLimitedExtension extension;

    @Inject
    Instance<HttpServletRequest> requests;

    /** A bean; the container makes it. */
    public RateLimitedMethods() {
    }

    /**
     * Starts with a web application's servlet context; any other payload is not one.
     *
     * @param payload the event's payload
     * @throws ServletException when the settings are invalid or the annotations name an unknown
     *                          rule or parameter
     */
    void started(@Observes @Initialized(ApplicationScoped.class) Object payload) throws ServletException {
        // Without an annotated CDI method nothing here needs the limits: starting them this early
        // (CDI starts before the application's listeners) would miss what those put in the
        // servlet context for them, such as a metrics registry.
        if (payload instanceof ServletContext context) {
            application = context;
            if (!extension.methods().isEmpty()) {
                start(context);
            }
        }
    }

    /**
     * Starts the application's limits (or joins those the filter or the Jakarta REST feature
     * started) and checks every annotated method found against them.
     *
     * @param context the application's servlet context
     * @throws ServletException when the settings are invalid
     * @throws IllegalStateException naming the method and the value, for an unknown rule or parameter
     */
    public void start(ServletContext context) throws ServletException {
        List<AnnotatedMethod> found = extension.methods().stream().map(this::annotated).toList();
        try {
            // Checked now against the settings; started at the first call (see LazyLimits).
            this.limits = LazyLimits.checked(context, reading -> found.forEach(m -> m.check(reading, false)));
            checked.addAll(extension.methods());
        } catch (InvalidSettingsException e) {
            throw new ServletException(e.getMessage(), e);
        }
    }

    /**
     * Decides a call, then runs it: a refused one throws {@link RateLimitExceededException}; an
     * allowed one's units are kept, or given back when it throws one of the exceptions its
     * annotations list; for a method returning a {@link CompletionStage}, when the stage completes
     * (a {@code concurrency} lease is held while the work runs).
     */
    Object call(InvocationContext call) throws Exception {
        if (call.getContextData().putIfAbsent(DECIDED, Boolean.TRUE) != null) {
            return call.proceed();
        }
        AnnotatedMethod annotated = annotated(call.getMethod());
        if (annotated.classLevelOnLocator()) {
            // A sub-resource locator of an annotated class: the requests it leads to are decided
            // by the sub-resource's methods, and its call is no action of its own.
            return call.proceed();
        }
        MethodDecision decision = limits(annotated).get().decideCall(currentRequest(), call.getMethod(),
                annotated.rules(), annotated.parameters().values(call.getParameters()), !annotated.giveBackOn().isEmpty());
        if (!decision.allowed()) {
            RateLimitExceededException refusal = new RateLimitExceededException(annotated.name(), decision);
            // Should the application let it through uncaught, the servlet filter answers it as its refusal.
            decision.thrown(refusal);
            throw refusal;
        }
        HttpServletRequest request = currentRequest();
        // A rule's cost-from=attribute: reads the request's attributes when the call is settled.
        java.util.function.Function<String, Object> attributes = request == null ? name -> null
                : name -> attribute(request, name);
        Object result;
        try {
            result = call.proceed();
        } catch (Exception | Error e) {
            settle(annotated, decision, e, attributes, null);
            throw e;
        }
        if (result instanceof CompletionStage<?> stage) {
            // The work runs on after the return: its units and leases are settled when it ends.
            stage.whenComplete((value, failure) -> settle(annotated, decision, unwrapped(failure), attributes, value));
        } else {
            decision.keep(attributes, result);
        }
        return result;
    }

    /** A request attribute, or none once the request is over (its object may be recycled). */
    private static Object attribute(HttpServletRequest request, String name) {
        try {
            return request.getAttribute(name);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * The application's limits. A server may intercept a method its CDI extension never saw (a
     * Jakarta REST resource its REST runtime makes, not CDI's discovery): such a method is
     * checked at its first call, and the limits started then from the start event's servlet
     * context or the request's.
     */
    private LazyLimits limits(AnnotatedMethod annotated) throws ServletException {
        LazyLimits running = limits;
        if (running != null && checked.contains(annotated.method())) {
            return running;
        }
        synchronized (this) {
            if (limits == null) {
                HttpServletRequest request = currentRequest();
                ServletContext context = application != null ? application
                        : request != null ? request.getServletContext() : null;
                if (context == null) {
                    throw new IllegalStateException("@RateLimited on " + annotated.name() + " called before the "
                            + "application's limits started: no servlet context was given (RateLimitedMethods.start)");
                }
                start(context);
            }
            if (!checked.contains(annotated.method())) {
                annotated.check(limits.get().reading(), false);
                // A refresh that drops or re-keys the method's rules is refused, as for the others.
                limits.checkReadings(reading -> annotated.check(reading, false));
                checked.add(annotated.method());
            }
            return limits;
        }
    }

    /** Keeps a finished call's units, or gives them back after one of the listed exceptions. */
    private static void settle(AnnotatedMethod annotated, MethodDecision decision, Throwable failure,
                               java.util.function.Function<String, Object> attributes, Object returned) {
        if (failure != null && annotated.givesBack(failure)) {
            decision.giveBack();
        } else {
            decision.keep(attributes, returned);
        }
    }

    /** What a stage failed with, without the wrapper a dependent stage adds. */
    private static Throwable unwrapped(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    private AnnotatedMethod annotated(Method method) {
        return methods.computeIfAbsent(method, AnnotatedMethod::of);
    }

    /** The HTTP request the call serves, or null: none in progress, or no servlet container. */
    private HttpServletRequest currentRequest() {
        try {
            if (requests == null || !requests.isResolvable()) {
                return null;
            }
            HttpServletRequest request = requests.get();
            return request.getMethod() == null ? null : request;
        } catch (RuntimeException e) {
            // No request context active: a call from a timer, a message, a thread of the application's.
            return null;
        }
    }
}
