package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimitExceededException;
import dev.ratelimit.jakarta.RateLimited;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Resources of the layered-request tests. */
final class LayeredResources {

    private LayeredResources() {
    }

    /** How many times an annotated method body ran. */
    static final AtomicInteger METHOD_RUNS = new AtomicInteger();
    static volatile CountDownLatch entered = new CountDownLatch(1);
    static volatile CountDownLatch release = new CountDownLatch(1);

    /** Everything under /e. */
    @Path("e")
    public static class E {

        private final LayeredBean bean;

        @Context
        private HttpServletRequest request;

        public E() {
            this(null);
        }

        E(LayeredBean bean) {
            this.bean = bean;
        }

        @GET
        @Path("free")
        public String free() {
            return "free";
        }

        @GET
        @Path("m/{user}")
        @RateLimited("m1")
        public String m(@PathParam("user") String user) {
            METHOD_RUNS.incrementAndGet();
            return "m " + user;
        }

        /** Annotated, and calls the CDI method n times. */
        @GET
        @Path("mc/{user}")
        @RateLimited("m1")
        public String mc(@PathParam("user") String user, @QueryParam("acct") long acct,
                         @QueryParam("n") @DefaultValue("1") int n) {
            METHOD_RUNS.incrementAndGet();
            return calls(acct, n, false);
        }

        /** Not annotated, calls the CDI method n times; catches its refusal if asked; wraps it if asked. */
        @GET
        @Path("cdi")
        public String cdi(@QueryParam("acct") long acct, @QueryParam("n") @DefaultValue("1") int n,
                          @QueryParam("catch") boolean catchIt, @QueryParam("wrap") boolean wrap,
                          @QueryParam("boom") boolean boom) {
            if (boom) {
                calls(acct, n, false);
                throw new IllegalArgumentException("boom");
            }
            if (wrap) {
                try {
                    return calls(acct, n, false);
                } catch (RateLimitExceededException e) {
                    throw new IllegalStateException("wrapped", e);
                }
            }
            return calls(acct, n, catchIt);
        }

        private String calls(long acct, int n, boolean catchIt) {
            BatchResetResource.CURRENT.set(request);
            try {
                int done = 0;
                for (int i = 0; i < n; i++) {
                    try {
                        bean.act(acct);
                        done++;
                    } catch (RateLimitExceededException e) {
                        if (!catchIt) {
                            throw e;
                        }
                        return "caught after " + done;
                    }
                }
                return "done " + done;
            } finally {
                BatchResetResource.CURRENT.remove();
            }
        }

        /** Waits for the test, then calls the CDI method n times. */
        @GET
        @Path("cdiwait")
        public String cdiWait(@QueryParam("acct") long acct, @QueryParam("n") @DefaultValue("1") int n)
                throws InterruptedException {
            entered.countDown();
            if (!release.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            return calls(acct, n, false);
        }

        /** Answers asynchronously once the test releases it. */
        @GET
        @Path("async/{user}")
        @RateLimited("m1")
        public void async(@PathParam("user") String user, @jakarta.ws.rs.container.Suspended
                          jakarta.ws.rs.container.AsyncResponse response) {
            METHOD_RUNS.incrementAndGet();
            new Thread(() -> {
                entered.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                response.resume("async " + user);
            }).start();
        }

        @GET
        @Path("slow")
        public String slow() throws InterruptedException {
            entered.countDown();
            if (!release.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            return "slow";
        }

        @GET
        @Path("int")
        @RateLimited("byid")
        public String byInt(@QueryParam("id") int id) {
            return "int " + id;
        }

        @GET
        @Path("def")
        @RateLimited("byid")
        public String byDefault(@QueryParam("id") @DefaultValue("5") int id) {
            return "def " + id;
        }

        @GET
        @Path("uuid")
        @RateLimited("byid")
        public String byUuid(@QueryParam("id") java.util.UUID id) {
            return "uuid " + id;
        }

        @GET
        @Path("enum")
        @RateLimited("byid")
        public String byEnum(@QueryParam("id") java.time.DayOfWeek id) {
            return "enum " + id;
        }

        @GET
        @Path("bean")
        @RateLimited("byid")
        public String byBean(@jakarta.ws.rs.BeanParam Ids ids) {
            return "bean " + ids.id;
        }

        @POST
        @Path("login")
        @RateLimited("login")
        public String login(@FormParam("username") String username) {
            return "login " + username;
        }
    }

    /** A plain servlet calling the CDI method and letting its refusal through uncaught. */
    static final class CallingServlet extends jakarta.servlet.http.HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient LayeredBean bean;

        CallingServlet(LayeredBean bean) {
            this.bean = bean;
        }

        @Override
        protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp)
                throws IOException {
            BatchResetResource.CURRENT.set(req);
            try {
                int n = Integer.parseInt(req.getParameter("n"));
                for (int i = 0; i < n; i++) {
                    bean.act(Long.parseLong(req.getParameter("acct")));
                }
                resp.getWriter().print("done " + n);
            } finally {
                BatchResetResource.CURRENT.remove();
            }
        }
    }

    /** A bean parameter. */
    public static class Ids {
        @QueryParam("id")
        @DefaultValue("9")
        public long id;
    }

    /** A method whose key name is ambiguous: the Java name of the query parameter is the REST name of the path parameter. */
    @Path("e")
    public static class Ambiguous {

        /** Limited per user, but which parameter is the user? */
        @GET
        @Path("amb/{username}")
        @RateLimited("byuser")
        public String ambiguous(@QueryParam("name") String username, @PathParam("username") String name) {
            return "amb " + name;
        }
    }
}
