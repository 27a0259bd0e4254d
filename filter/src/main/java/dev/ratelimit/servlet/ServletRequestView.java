package dev.ratelimit.servlet;

import dev.ratelimit.config.RequestView;
import jakarta.servlet.http.HttpServletRequest;

import java.security.Principal;
import java.util.Enumeration;

/**
 * A servlet request as the rules look at it: the filter's side of {@link RequestView}, read
 * straight from the request at each call (nothing copied).
 *
 * @param request the request
 */
record ServletRequestView(HttpServletRequest request) implements RequestView {

    @Override
    public String method() {
        return request.getMethod();
    }

    /** The path within the application the container dispatches to, already decoded and normalised. */
    @Override
    public String path() {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        return path.isEmpty() ? "/" : path;
    }

    @Override
    public String header(String name) {
        return request.getHeader(name);
    }

    @Override
    public Enumeration<String> headers(String name) {
        return request.getHeaders(name);
    }

    @Override
    public String parameter(String name) {
        return request.getParameter(name);
    }

    @Override
    public String principal() {
        Principal principal = request.getUserPrincipal();
        return principal == null ? null : principal.getName();
    }

    @Override
    public boolean isUserInRole(String role) {
        return request.isUserInRole(role);
    }

    @Override
    public Object attribute(String name) {
        return request.getAttribute(name);
    }

    @Override
    public String remoteAddr() {
        return request.getRemoteAddr();
    }
}
