package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

/** Resources for {@link AnnotationMixTest}: several annotations, and exceptions mapped to responses. */
final class MixResources {

    private MixResources() {
    }

    /** Two rules on one method: {@code a} for all, {@code b} per item at a cost of 2. */
    @Path("items/{id}")
    public static class Items {

        /** Names the item. */
        @GET
        @RateLimited("a")
        @RateLimited("b")
        public String item(@PathParam("id") String id) {
            return "item " + id;
        }
    }

    /** A refused report, mapped to 422 by {@link RefusedMapper}. */
    public static class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    /** Maps {@link Refused}, as an application maps its own exceptions. */
    public static class RefusedMapper implements ExceptionMapper<Refused> {

        @Override
        public Response toResponse(Refused exception) {
            return Response.status(422).entity("refused").build();
        }
    }

    /** One report at a time ({@code concurrency}), throwing mapped exceptions. */
    @Path("reports")
    public static class Reports {

        /** 404 by Jakarta REST's own mapping, 422 by the application's, else 200. */
        @GET
        @RateLimited("exports")
        public String report(@QueryParam("throw") String kind) {
            if ("404".equals(kind)) {
                throw new NotFoundException();
            }
            if ("422".equals(kind)) {
                throw new Refused();
            }
            return "report";
        }
    }
}
