package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.Response;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Resources for the edge cases of {@link AnnotationEdgeTest}, each the same path limited or not. */
final class EdgeResources {

    private EdgeResources() {
    }

    /** {@code /p} under the servlet filter only: no annotation. */
    @Path("p")
    public static class Plain {

        /** Answers. */
        @GET
        public String get() {
            return "ok";
        }
    }

    /** {@code /p} limited by its annotation only. */
    @Path("p")
    public static class Annotated {

        /** Answers. */
        @GET
        @RateLimited("api")
        public String get() {
            return "ok";
        }
    }

    /** A form echoed back, not limited: what Jakarta REST itself answers to a body. */
    @Path("form")
    public static class PlainForm {

        /** Echoes the user. */
        @POST
        public String post(@FormParam("username") String username, @FormParam("password") String password) {
            return "user " + username + " " + password;
        }
    }

    /** The same form, limited per user name. */
    @Path("form")
    public static class LimitedForm {

        /** Echoes the user. */
        @POST
        @RateLimited("login")
        public String post(@FormParam("username") String username, @FormParam("password") String password) {
            return "user " + username + " " + password;
        }
    }

    /** Asynchronous resource methods under a {@code concurrency} rule. */
    @Path("async")
    public static class Async {

        /** Resumes later, on another thread: 200, or a mapped 409 for {@code ?fail=1}. */
        @GET
        @Path("suspended")
        @RateLimited("exports")
        public void suspended(@QueryParam("fail") String fail, @Suspended AsyncResponse response) {
            CompletableFuture.runAsync(() -> {
                if ("1".equals(fail)) {
                    response.resume(new WebApplicationException(409));
                } else {
                    response.resume("done");
                }
            });
        }

        /** Completes later: 200, or a mapped 409 for {@code ?fail=1}. */
        @GET
        @Path("stage")
        @RateLimited("exports")
        public CompletionStage<String> stage(@QueryParam("fail") String fail) {
            return CompletableFuture.supplyAsync(() -> {
                if ("1".equals(fail)) {
                    throw new WebApplicationException(Response.status(409).build());
                }
                return "done";
            });
        }
    }
}
