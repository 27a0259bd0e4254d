package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.MethodDecision;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.Response;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Decides each request of one {@link RateLimited} resource method before it runs, as the servlet
 * filter decides a request: one all-or-nothing decision on the method's rules (less those the
 * servlet filter already decided for the request), a refusal answered with the filter's 429 or
 * 503; an allowed request's response gets the rate-limit fields, and its units are settled by
 * the response's status ({@code count-when}, {@code refund-when}, permits of {@code concurrency}).
 * A request a {@code max-delay} rule admits for a slot to come is held by the servlet filter: the
 * method is stopped now and runs when the request is dispatched again at its slot.
 *
 * <p>A response Jakarta REST never writes (an exception no mapper maps, rethrown to the
 * container) runs no response filter: its reserved units stay counted, and a concurrency permit
 * is held until its {@code permit-timeout}.
 */
final class RateLimitedFilter implements ContainerRequestFilter, ContainerResponseFilter {

    /** The request property holding the request's decision, for the response filter. */
    private static final String DECISION = RateLimitedFilter.class.getName() + ".decision";

    private final LazyLimits limits;
    private final AnnotatedMethod method;
    /** The resource method as Jakarta REST invokes it: its CDI interceptor, if any, passes that invocation. */
    private final Method resourceMethod;

    /**
     * The servlet request being served: the feature's proxy, which stands for the request in
     * progress (Jakarta REST injects no context into a filter instance a feature registers);
     * null outside a servlet container.
     */
    private final HttpServletRequest request;


    RateLimitedFilter(LazyLimits limits, AnnotatedMethod method, Method resourceMethod, HttpServletRequest request) {
        this.limits = limits;
        this.method = method;
        this.resourceMethod = resourceMethod;
        this.request = request;
    }

    @Override
    public void filter(ContainerRequestContext context) throws IOException {
        HttpServletRequest servlet = servletRequest();
        if (servlet != null) {
            // The user a Jakarta REST filter authenticated, for a principal key or a plan by role.
            servlet = new AuthenticatedRequest(servlet, context.getSecurityContext());
        }
        MethodDecision decision = limits.get().decideRequest(servlet, resourceMethod, method.rules(),
                values(context, servlet), true);
        if (decision.held()) {
            // Held for its slot by the servlet filter, which drops this answer and dispatches the
            // request again at the slot: the method runs then, by this decision.
            context.abortWith(Response.noContent().build());
            return;
        }
        if (!decision.allowed()) {
            context.abortWith(Refusals.of(decision));
            return;
        }
        context.setProperty(DECISION, decision);
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        if (!(request.getProperty(DECISION) instanceof MethodDecision decision)) {
            return;
        }
        request.removeProperty(DECISION);
        decision.headers(response.getStatus()).forEach((name, value) -> {
            if (!response.getHeaders().containsKey(name)) {
                response.getHeaders().putSingle(name, value);
            }
        });
        // A rule's cost-from: a response header, a request property (the servlet request's
        // attributes), or the returned entity.
        decision.settle(response.getStatus(), response::getHeaderString, request::getProperty, response.getEntity());
    }

    /** The servlet request, or null where there is none (the proxy then fails on use). */
    private HttpServletRequest servletRequest() {
        try {
            return request == null || request.getMethod() == null ? null : request;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * The method's parameters as this request gives them, by every name they answer to: the text
     * of what the method receives ({@link MethodParameters.Named#received}: its default when
     * nothing is sent, converted as Jakarta REST converts it) from path and query parameters of the
     * URI and form parameters of the body (read, then put back for the method), falling back to
     * the servlet request's parameters when the body was read before (by the servlet filter).
     */
    private Map<String, String> values(ContainerRequestContext context, HttpServletRequest servlet)
            throws IOException {
        Map<String, String> values = new LinkedHashMap<>();
        FormBodies.Form form = null;
        for (MethodParameters.Named parameter : method.parameters().parameters()) {
            Optional<String> value = switch (parameter.source()) {
                case PATH -> parameter.received(context.getUriInfo().getPathParameters(!parameter.encoded())
                        .getFirst(parameter.rest()));
                case QUERY -> parameter.received(context.getUriInfo().getQueryParameters(!parameter.encoded())
                        .getFirst(parameter.rest()));
                case FORM -> {
                    form = form != null ? form
                            : FormBodies.read(context, servlet == null ? 0 : servlet.getContentLengthLong());
                    // Only a body read before (by the servlet filter) falls back to the servlet request's
                    // parameters, as Jakarta REST does: else a query parameter would stand in for a form's.
                    yield parameter.received(form.readBefore() && servlet != null ? servlet.getParameter(parameter.rest())
                            : form.parameters().getFirst(parameter.rest()));
                }
                case ARGUMENT -> Optional.empty();
            };
            value.ifPresent(text -> parameter.names().forEach(name -> values.putIfAbsent(name, text)));
        }
        return values;
    }
}
