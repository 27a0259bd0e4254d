package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;

/**
 * Resources whose Jakarta REST annotations, {@code @RateLimited} among them, are on an interface
 * or a superclass, as generated API interfaces (OpenAPI, MicroProfile) put them: Jakarta REST
 * inherits them (section 3.6 of the specification), and so must the limit.
 */
final class InheritedResources {

    private InheritedResources() {
    }

    /** An API contract, as a generator writes it. */
    @Path("contract")
    public interface Contract {

        /** Answers. */
        @GET
        @RateLimited("api")
        String get();
    }

    /** The application's implementation: no annotation of its own. */
    public static class Implementation implements Contract {

        @Override
        public String get() {
            return "ok";
        }
    }
}
