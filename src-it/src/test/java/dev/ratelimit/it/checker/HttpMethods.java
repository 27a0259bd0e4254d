package dev.ratelimit.it.checker;

import dev.ratelimit.jakarta.RateLimitExceededMapper;
import dev.ratelimit.jakarta.RateLimited;
import dev.ratelimit.jakarta.RateLimitedFeature;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
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
 * (the workload's rules {@code r0} to {@code r3}, which every run configures), and what the
 * workload knows of them: their paths, the rules each names, and whether the caller is a
 * {@code @PathParam} or a {@code @QueryParam}. Each answers the status the request asks for
 * ({@code ?status=}), so that {@code count-when} and {@code refund-when} settle by it.
 *
 * <p>Served under {@code /j/*}, where no rule of the servlet filter matches, and under
 * {@code /s<mask>/j/*}, where the filter has decided the mask's rules first: the method then
 * decides only the rules the filter did not (one decision per rule and request).
 */
final class HttpMethods {

    /**
     * One annotated method as the workload calls it.
     *
     * @param path      its path under {@code j/}, {@code {caller}} standing for the caller
     * @param rules     the rules it names (bit i: rule {@code ri})
     * @param pathParam whether the caller is a path parameter (else a query parameter)
     * @param cdi       whether the resource method is plain and calls {@link HttpBean#work} (the
     *                  rules are the bean's), refused there for a status of 400 or more
     */
    record Method(String path, int rules, boolean pathParam, boolean cdi) {

        /** Its path for a caller, under a prefix ({@code /j/} or {@code /s<mask>/j/}). */
        String target(String prefix, String caller) {
            return prefix + path.replace("{caller}", caller);
        }
    }

    /** The methods of {@link Resource}, in its order. */
    static final List<Method> METHODS = List.of(
            new Method("a/{caller}", 0b0001, true, false),
            new Method("b", 0b0010, false, false),
            new Method("ab/{caller}", 0b0011, true, false),
            new Method("bc", 0b0110, false, false),
            new Method("acd/{caller}", 0b1101, true, false),
            new Method("d", 0b1000, false, false),
            new Method("cdi", 0b0011, false, true));

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
     * A method whose rules a run of {@code count} rules all has, or -1 for none.
     *
     * @param random the workload's random
     * @param count  how many rules the run has
     * @return an index into {@link #METHODS}, or -1
     */
    static int draw(Random random, int count) {
        int index = random.nextInt(METHODS.size());
        return METHODS.get(index).rules() < 1 << count ? index : -1;
    }

    /**
     * The resource: each method notes that the application was reached (both decisions made)
     * and answers the status asked for.
     */
    @Path("/")
    public static final class Resource {
        private final Consumer<String> reached;
        private final Supplier<HttpBean> bean;

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

        /** Rule r0, the caller from the path. */
        @GET
        @Path("a/{caller}")
        @RateLimited("r0")
        public Response a(@PathParam("caller") String caller, @QueryParam("status") int status,
                          @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rule r1, the caller from the query. */
        @GET
        @Path("b")
        @RateLimited("r1")
        public Response b(@QueryParam("caller") String caller, @QueryParam("status") int status,
                          @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rules r0 and r1, one decision. */
        @GET
        @Path("ab/{caller}")
        @RateLimited("r0")
        @RateLimited("r1")
        public Response ab(@PathParam("caller") String caller, @QueryParam("status") int status,
                           @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rules r1 and r2, one decision. */
        @GET
        @Path("bc")
        @RateLimited("r1")
        @RateLimited("r2")
        public Response bc(@QueryParam("caller") String caller, @QueryParam("status") int status,
                           @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** Rules r0, r2 and r3, one decision. */
        @GET
        @Path("acd/{caller}")
        @RateLimited("r0")
        @RateLimited("r2")
        @RateLimited("r3")
        public Response acd(@PathParam("caller") String caller, @QueryParam("status") int status,
                            @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }

        /** No rule of its own: the CDI bean's method decides (a refusal mapped to the filter's 429). */
        @GET
        @Path("cdi")
        public Response cdi(@QueryParam("caller") String caller, @QueryParam("status") int status,
                            @HeaderParam("X-Check-Id") String id) {
            try {
                bean.get().work(caller, status >= 400);
            } catch (HttpBean.Refused e) {
                // given back; the status asked for all the same
            }
            return answer(id, status);
        }

        /** Rule r3, the caller from the query. */
        @GET
        @Path("d")
        @RateLimited("r3")
        public Response d(@QueryParam("caller") String caller, @QueryParam("status") int status,
                          @HeaderParam("X-Check-Id") String id) {
            return answer(id, status);
        }
    }
}
