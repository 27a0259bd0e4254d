package dev.ratelimit.it.checker;

import dev.ratelimit.jakarta.RateLimitExceededMapper;
import dev.ratelimit.jakarta.RateLimited;
import dev.ratelimit.jakarta.RateLimitedFeature;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The Jakarta REST resource methods of the checker's app, annotated with {@link RateLimited}
 * (the workload's method rules {@code m0} to {@code m3}, which every run configures with
 * {@code scope=method}), and what the workload knows of them: their paths, the rules each names,
 * and where the caller comes from: a {@code @PathParam} (the query's {@code caller}, which the
 * workload may set to another caller, must not key it), a {@code @QueryParam}, or one with a
 * {@code @DefaultValue} (a request without it is the caller {@value #DEFAULT_CALLER}). One is
 * reached through a sub-resource locator; one calls the CDI bean {@link HttpBean}, whose rules
 * decide instead. Each answers the status the request asks for ({@code ?status=}), so that
 * {@code count-when} and {@code refund-when} settle by it.
 *
 * <p>Served under {@code /j/*}, where no route rule of the servlet filter matches, and under
 * {@code /s<mask>/j/*}, where the filter decides the mask's route rules first: both layers
 * decide one request, and a refusal by either gives back what the other took.
 */
final class HttpMethods {

    /** The caller a method with a default receives when the request names none. */
    static final String DEFAULT_CALLER = "anonymous";

    /** Where a method's caller comes from. */
    enum Caller {
        /** A path parameter. */
        PATH,
        /** A query parameter: none when not sent. */
        QUERY,
        /** A query parameter with {@code @DefaultValue}: {@value #DEFAULT_CALLER} when not sent. */
        QUERY_DEFAULT
    }

    /**
     * One annotated method as the workload calls it.
     *
     * @param path   its path under {@code j/}, {@code {caller}} standing for the caller
     * @param rules  the method rules it names (bit i: rule {@code mi})
     * @param caller where its caller comes from
     * @param cdi    whether the resource method is plain and calls {@link HttpBean#work} (the
     *               rules are the bean's), refused there for a status of 400 or more
     */
    record Method(String path, int rules, Caller caller, boolean cdi) {

        /** Its path for a caller, under a prefix ({@code /j/} or {@code /s<mask>/j/}). */
        String target(String prefix, String caller) {
            return prefix + path.replace("{caller}", caller);
        }

        /**
         * The caller the method receives: the path's, or the query's (its default when none).
         *
         * @param path  the caller in the path
         * @param query the query's caller, or null when not sent
         * @return the caller, or null when the method receives none
         */
        String receives(String path, String query) {
            return switch (caller) {
                case PATH -> path;
                case QUERY -> query;
                case QUERY_DEFAULT -> query != null ? query : DEFAULT_CALLER;
            };
        }
    }

    /** The methods of {@link Resource}, in its order. */
    static final List<Method> METHODS = List.of(
            new Method("a/{caller}", 0b0001, Caller.PATH, false),
            new Method("b", 0b0010, Caller.QUERY, false),
            new Method("ab/{caller}", 0b0011, Caller.PATH, false),
            new Method("bc", 0b0110, Caller.QUERY, false),
            new Method("acd/{caller}", 0b1101, Caller.PATH, false),
            new Method("d", 0b1000, Caller.QUERY_DEFAULT, false),
            new Method("loc/{caller}/x", 0b0010, Caller.PATH, false),
            new Method("cdi", 0b0011, Caller.QUERY, true));

    private HttpMethods() {
    }

    /**
     * Jersey serving {@link Resource} with {@code RateLimitedFeature}, started with the app (an
     * annotation the settings do not satisfy fails the start).
     *
     * @param reached called with a request's {@code X-Check-Id} when a method runs
     * @param bean    the CDI bean, once started
     * @return the servlet, to map
     */
    static ServletHolder servlet(Consumer<String> reached, Supplier<HttpBean> bean) {
        ResourceConfig rest = new ResourceConfig(RateLimitedFeature.class, RateLimitExceededMapper.class)
                .register(new Resource(reached, bean));
        ServletHolder jersey = new ServletHolder(new ServletContainer(rest));
        jersey.setInitOrder(1);
        return jersey;
    }

    /**
     * A method at random.
     *
     * @param random the workload's random
     * @return an index into {@link #METHODS}
     */
    static int draw(Random random) {
        return random.nextInt(METHODS.size());
    }

    /**
     * The resource: each method notes that the application was reached (both decisions made)
     * and answers the status asked for.
     */
    @Path("/")
    public static final class Resource {
        private final Consumer<String> reached;
        private final Supplier<HttpBean> bean;

        /** The request in progress, handed to the CDI bean's interceptor. */
        @Context
        private HttpServletRequest request;

        Resource(Consumer<String> reached, Supplier<HttpBean> bean) {
            this.reached = reached;
            this.bean = bean;
        }

        private Response answer(String id, int status) {
            if (id != null) {
                reached.accept(id);
            }
            return Response.status(status).entity("outcome " + status).type("text/plain").build();
        }

        /** Rule m0, the caller from the path. */
        @GET
        @Path("a/{caller}")
        @RateLimited("m0")
        public Response a(@PathParam("caller") String caller, @QueryParam("status") int status,
                          @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rule m1, the caller from the query. */
        @GET
        @Path("b")
        @RateLimited("m1")
        public Response b(@QueryParam("caller") String caller, @QueryParam("status") int status,
                          @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rules m0 and m1, one decision. */
        @GET
        @Path("ab/{caller}")
        @RateLimited("m0")
        @RateLimited("m1")
        public Response ab(@PathParam("caller") String caller, @QueryParam("status") int status,
                           @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rules m1 and m2, one decision. */
        @GET
        @Path("bc")
        @RateLimited("m1")
        @RateLimited("m2")
        public Response bc(@QueryParam("caller") String caller, @QueryParam("status") int status,
                           @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rules m0, m2 and m3, one decision. */
        @GET
        @Path("acd/{caller}")
        @RateLimited("m0")
        @RateLimited("m2")
        @RateLimited("m3")
        public Response acd(@PathParam("caller") String caller, @QueryParam("status") int status,
                            @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rule m3, the caller from the query, anonymous when none is sent. */
        @GET
        @Path("d")
        @RateLimited("m3")
        public Response d(@QueryParam("caller") @DefaultValue(DEFAULT_CALLER) String caller,
                          @QueryParam("status") int status, @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** A sub-resource locator: the sub-resource's method decides. */
        @Path("loc/{caller}")
        public Located located() {
            return new Located(this);
        }

        /** No rule of its own: the CDI bean's method decides (a refusal mapped to the filter's 429). */
        @GET
        @Path("cdi")
        public Response cdi(@QueryParam("caller") String caller, @QueryParam("status") int status,
                            @HeaderParam("X-Check-Id") String id) {
            HttpRequests.CURRENT.set(request);
            try {
                bean.get().work(caller, status >= 400);
            } catch (HttpBean.Refused e) {
                // given back; the status asked for all the same
            } finally {
                HttpRequests.CURRENT.remove();
            }
            return answer(id, status);
        }
    }

    /** The sub-resource {@link Resource#located} returns. */
    public static final class Located {
        private final Resource resource;

        Located(Resource resource) {
            this.resource = resource;
        }

        /** Rule m1, the caller from the locator's path. */
        @GET
        @Path("x")
        @RateLimited("m1")
        public Response x(@PathParam("caller") String caller, @QueryParam("status") int status,
                          @HeaderParam("X-Check-Id") String id) {
            return resource.answer(id, status);
        }
    }
}
