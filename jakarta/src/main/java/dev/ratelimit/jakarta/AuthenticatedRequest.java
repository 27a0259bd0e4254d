package dev.ratelimit.jakarta;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.ws.rs.core.SecurityContext;

import java.security.Principal;

/**
 * The servlet request a resource method serves, with the user and roles Jakarta REST knows: an
 * application that authenticates in a Jakarta REST filter (a bearer token) sets a
 * {@link SecurityContext} the servlet request never hears of, and a rule keyed by
 * {@code principal}, or a plan by role, must see that user as the method does.
 */
final class AuthenticatedRequest extends HttpServletRequestWrapper {

    private final SecurityContext security;

    /**
     * The request as Jakarta REST sees it.
     *
     * @param request  the servlet request
     * @param security the request's security context (the servlet request's own unless a filter replaced it)
     */
    AuthenticatedRequest(HttpServletRequest request, SecurityContext security) {
        super(request);
        this.security = security;
    }

    @Override
    public Principal getUserPrincipal() {
        Principal user = security == null ? null : security.getUserPrincipal();
        return user != null ? user : super.getUserPrincipal();
    }

    @Override
    public boolean isUserInRole(String role) {
        return security != null && security.isUserInRole(role) || super.isUserInRole(role);
    }
}
