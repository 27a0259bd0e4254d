package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.RateLimits;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

/**
 * Adds to the response of a resource method with no {@link RateLimited} of its own the rate-limit
 * fields of the rules its request was decided by elsewhere: a {@link RateLimited} CDI method it
 * called. (Behind the servlet filter, those are on the servlet response already; Jakarta REST
 * keeps them there, as it sets only the fields its own response has.)
 */
final class AccountFields implements ContainerResponseFilter {

    /** The servlet request being served: the feature's proxy; null outside a servlet container. */
    private final HttpServletRequest request;

    AccountFields(HttpServletRequest request) {
        this.request = request;
    }

    @Override
    public void filter(ContainerRequestContext requestContext, ContainerResponseContext response) {
        HttpServletRequest servlet;
        try {
            servlet = request == null || request.getMethod() == null ? null : request;
        } catch (RuntimeException e) {
            return;
        }
        RateLimits.fields(servlet, response.getStatus()).forEach((name, value) -> {
            if (!response.getHeaders().containsKey(name)) {
                response.getHeaders().putSingle(name, value);
            }
        });
    }
}
