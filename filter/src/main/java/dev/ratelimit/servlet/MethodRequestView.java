package dev.ratelimit.servlet;

import dev.ratelimit.config.RequestView;
import jakarta.servlet.http.HttpServletRequest;

import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;

/**
 * A call of an annotated method as the rules look at it: a rule's {@code param:<name>} key part
 * reads the method's parameter of that name (a {@code @PathParam}, {@code @QueryParam},
 * {@code @FormParam} or a CDI method's parameter), every other part the HTTP request the call
 * serves, if any. Without a request, a call has no address, principal, header or path: a rule
 * whose key needs one does not count it (annotated methods are checked for that at deployment).
 *
 * @param request    the HTTP request the call serves, or null
 * @param parameters the method's parameters by the names the rules use, their values as text
 */
record MethodRequestView(HttpServletRequest request, Map<String, String> parameters) implements RequestView {

    /** Copies the parameters. */
    MethodRequestView {
        parameters = Map.copyOf(parameters);
    }

    @Override
    public String method() {
        return request == null ? "" : request.getMethod();
    }

    @Override
    public String path() {
        return request == null ? "/" : new ServletRequestView(request).path();
    }

    @Override
    public String header(String name) {
        return request == null ? null : request.getHeader(name);
    }

    @Override
    public Enumeration<String> headers(String name) {
        return request == null ? Collections.emptyEnumeration() : request.getHeaders(name);
    }

    /** The method's parameter of that name; never the request's, which the method did not name. */
    @Override
    public String parameter(String name) {
        return parameters.get(name);
    }

    @Override
    public String principal() {
        return request == null || request.getUserPrincipal() == null ? null : request.getUserPrincipal().getName();
    }

    @Override
    public boolean isUserInRole(String role) {
        return request != null && request.isUserInRole(role);
    }

    @Override
    public Object attribute(String name) {
        return request == null ? null : request.getAttribute(name);
    }

    @Override
    public String remoteAddr() {
        return request == null ? null : request.getRemoteAddr();
    }
}
