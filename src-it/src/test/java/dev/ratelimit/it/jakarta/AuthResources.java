package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.annotation.Priority;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.SecurityContext;

import java.security.Principal;

/**
 * An application that authenticates in Jakarta REST itself, as token filters do: a request
 * filter at {@link Priorities#AUTHENTICATION} sets the {@link SecurityContext} the resource sees.
 */
final class AuthResources {

    private AuthResources() {
    }

    /** Takes the user from {@code X-User}, as a token filter takes it from a bearer token. */
    @Priority(Priorities.AUTHENTICATION)
    public static class TokenFilter implements ContainerRequestFilter {

        @Override
        public void filter(ContainerRequestContext request) {
            String user = request.getHeaderString("X-User");
            if (user == null) {
                return;
            }
            Principal principal = () -> user;
            request.setSecurityContext(new SecurityContext() {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return "pro".equals(role) && user.startsWith("pro-");
                }

                @Override
                public boolean isSecure() {
                    return false;
                }

                @Override
                public String getAuthenticationScheme() {
                    return "Bearer";
                }
            });
        }
    }

    /** The user's own page, limited per user ({@code key=principal}). */
    @Path("me")
    public static class Me {

        /** Names the user Jakarta REST authenticated. */
        @GET
        @RateLimited("user")
        public String me(@Context SecurityContext security) {
            return "me " + security.getUserPrincipal().getName();
        }
    }
}
