package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Response;

/** The Jakarta REST resources the tests limit, each the shape of a real application's. */
final class Resources {

    private Resources() {
    }

    /** A login form: five logins per user name ({@code ratelimit.rule.login.key=param:username}). */
    @Path("login")
    public static class Login {

        /** Welcomes the user, or answers 401 for the password {@code wrong}. */
        @POST
        @RateLimited("login")
        public Response login(@FormParam("username") String username, @FormParam("password") String password) {
            if ("wrong".equals(password)) {
                return Response.status(401).entity("who are you, " + username).build();
            }
            return Response.ok("welcome " + username).build();
        }
    }

    /** An account's page, limited per account by its path parameter. */
    @Path("accounts/{id}")
    public static class Account {

        /** Names the account. */
        @GET
        @RateLimited("account")
        public String account(@PathParam("id") String id) {
            return "account " + id;
        }
    }

    /**
     * A model's completions: {@code /complete/header?tokens=N} reports its tokens in the
     * {@code X-Tokens-Used} header, {@code /complete/attribute} in the request attribute
     * {@code tokens}, {@code /complete/entity} returns them as its entity.
     */
    @Path("complete")
    public static class Complete {

        /** The request, for its attributes. */
        @jakarta.ws.rs.core.Context
        jakarta.servlet.http.HttpServletRequest request;

        /** Reports the tokens in a header. */
        @GET
        @Path("header")
        @RateLimited("tokens")
        public Response header(@jakarta.ws.rs.QueryParam("tokens") long tokens) {
            return Response.ok("done").header("X-Tokens-Used", tokens).build();
        }

        /** Reports the tokens in a request attribute. */
        @GET
        @Path("attribute")
        @RateLimited("rows")
        public String attribute(@jakarta.ws.rs.QueryParam("tokens") long tokens) {
            request.setAttribute("tokens", tokens);
            return "done";
        }

        /** Returns the tokens. */
        @GET
        @Path("entity")
        @RateLimited("bytes")
        public Long entity(@jakarta.ws.rs.QueryParam("tokens") long tokens) {
            return tokens;
        }
    }

    /** A resource under a rule the servlet filter also applies, for the double-count test. */
    @Path("search")
    public static class Search {

        /** Finds nothing. */
        @GET
        @RateLimited("api")
        public String search() {
            return "nothing found";
        }
    }

    /** One search in progress at a time: a {@code concurrency} rule, its lease released after each response. */
    @Path("export")
    public static class Export {

        /** Exports nothing, or fails with 500 for {@code ?fail=1}. */
        @GET
        @RateLimited("exports")
        public Response export(@jakarta.ws.rs.QueryParam("fail") String fail) {
            return "1".equals(fail) ? Response.serverError().build() : Response.ok("exported").build();
        }
    }

    /** Names a rule the settings do not have. */
    @Path("typo")
    public static class UnknownRule {

        /** Never served. */
        @GET
        @RateLimited("logni")
        public String typo() {
            return "unreachable";
        }
    }

    /** Its rule's key names a parameter the method does not have. */
    @Path("login-by-user")
    public static class UnknownParameter {

        /** Never served. */
        @POST
        @RateLimited("login")
        public String login(@FormParam("user") String user) {
            return "unreachable";
        }
    }
}
