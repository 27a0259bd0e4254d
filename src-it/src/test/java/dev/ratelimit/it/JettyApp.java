package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.servlet.RateLimits;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;

/**
 * A real Jetty 12 server with {@link RateLimitFilter} in front of a servlet that answers
 * {@code ok <path>} to everything. Each app has its own class loader with its own MicroProfile
 * Config (SmallRye, from the given map), as two separate deployments would.
 *
 * <p>A request header {@code X-Test-User: alice} makes the request authenticated as alice: the
 * test's stand-in for a real login.
 */
final class JettyApp implements AutoCloseable {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Server server;
    private final ClassLoader loader;
    private final ServletContextHandler context;

    private JettyApp(Server server, ClassLoader loader, ServletContextHandler context) {
        this.server = server;
        this.loader = loader;
        this.context = context;
    }

    /**
     * Reads the app's settings again now ({@link RateLimits#refreshNow()}): once it returns, a
     * reading made after every edit before the call is applied or refused, and logged.
     */
    void refreshSettings() throws Exception {
        if (!refreshNow()) {
            throw new IllegalStateException("no settings refresh runs: set ratelimit.refresh");
        }
    }

    /** {@link RateLimits#refreshNow()}: false when no refresh runs. */
    boolean refreshNow() throws Exception {
        return RateLimits.of(context.getServletContext()).refreshNow();
    }

    /**
     * Starts an app with these settings.
     *
     * @throws Exception whatever Jetty throws when the app does not start (e.g. bad settings)
     */
    static JettyApp start(Map<String, String> settings) throws Exception {
        return start(settings, Map.of());
    }

    /**
     * Starts an app with these settings and these environment variables (read the way
     * MicroProfile Config reads the real environment: {@code RATELIMIT_RULE_API_LIMIT}).
     *
     * @throws Exception whatever Jetty throws when the app does not start
     */
    static JettyApp start(Map<String, String> settings, Map<String, String> environment) throws Exception {
        return start(settings, environment, null);
    }

    /**
     * Starts an app whose servlet context holds a {@link RateLimitListener}, as an application
     * would set it up for metrics.
     *
     * @throws Exception whatever Jetty throws when the app does not start
     */
    static JettyApp start(Map<String, String> settings, Map<String, String> environment, RateLimitListener listener)
            throws Exception {
        return start(new PropertiesConfigSource(settings, "test", 100), environment,
                listener == null ? Map.of() : Map.of(RateLimitListener.class.getName(), listener));
    }

    /**
     * Starts an app whose servlet context holds these attributes before the filter starts, as an
     * application's {@code ServletContextListener} would set them.
     *
     * @throws Exception whatever Jetty throws when the app does not start
     */
    static JettyApp startWithAttributes(Map<String, String> settings, Map<String, Object> attributes) throws Exception {
        return start(new PropertiesConfigSource(settings, "test", 100), Map.of(), attributes);
    }

    /**
     * Starts an app whose settings come from the given config source, which may change while
     * the app runs, and whose servlet context holds these attributes before the filter starts.
     *
     * @throws Exception whatever Jetty throws when the app does not start
     */
    static JettyApp startWithAttributes(org.eclipse.microprofile.config.spi.ConfigSource source,
                                        Map<String, Object> attributes) throws Exception {
        return start(source, Map.of(), attributes);
    }

    /**
     * Starts an app whose settings come from the given config source, which may change while
     * the app runs (a dynamic source).
     *
     * @throws Exception whatever Jetty throws when the app does not start
     */
    static JettyApp start(org.eclipse.microprofile.config.spi.ConfigSource source) throws Exception {
        return start(source, Map.of(), Map.of());
    }

    private static JettyApp start(org.eclipse.microprofile.config.spi.ConfigSource source, Map<String, String> environment,
                                  Map<String, Object> attributes) throws Exception {
        ClassLoader loader = new URLClassLoader(new URL[0], JettyApp.class.getClassLoader());
        ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder()
                .withSources(source)
                .withSources(new EnvConfigSource(environment, 300)).build(), loader);

        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler("/");
        context.setClassLoader(loader);
        attributes.forEach(context::setAttribute);
        FilterHolder authenticator = new FilterHolder(new TestAuthenticator());
        authenticator.setAsyncSupported(true);
        context.addFilter(authenticator, "/*", EnumSet.of(DispatcherType.REQUEST));
        // Mapped the way web.xml files often map it: for every dispatcher type, async supported.
        FilterHolder limiter = new FilterHolder(RateLimitFilter.class);
        limiter.setAsyncSupported(true);
        context.addFilter(limiter, "/*", EnumSet.allOf(DispatcherType.class));
        context.addServlet(new ServletHolder(new EchoServlet()), "/");
        context.addServlet(new ServletHolder(new LoginServlet()), "/login");
        ServletHolder outcome = new ServletHolder(new OutcomeServlet());
        outcome.setAsyncSupported(true);
        context.addServlet(outcome, "/outcome");
        for (ServletHolder holder : DispatchServlets.holders()) {
            context.addServlet(holder, holder.getName());
        }
        ErrorPageErrorHandler errorPages = new ErrorPageErrorHandler();
        errorPages.addErrorPage(404, DispatchServlets.ERROR_PAGE);
        errorPages.addErrorPage(Throwable.class, DispatchServlets.ERROR_PAGE);
        context.setErrorHandler(errorPages);
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
            throw e;
        }
        if (!context.isAvailable()) {
            server.stop();
            throw new IllegalStateException("the context did not become available");
        }
        return new JettyApp(server, loader, context);
    }

    /**
     * Settings for an app on the given Valkey, with a generous reply timeout, plus the given
     * property/value pairs.
     */
    static Map<String, String> settings(String valkeyUrl, String... pairs) {
        Map<String, String> m = new java.util.HashMap<>();
        m.put("ratelimit.valkey.url", valkeyUrl);
        m.put("ratelimit.valkey.timeout", "2s");
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }

    int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort() + pathAndQuery);
    }

    HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> postForm(String path, String form, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded");
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.POST(HttpRequest.BodyPublishers.ofString(form)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() throws Exception {
        server.stop();
        ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
    }

    /** Answers {@code ok <path>} with 200 to every method. */
    static final class EchoServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setContentType("text/plain");
            response.getWriter().write("ok " + request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo()));
        }
    }

    /** The servlet a path trick would want to reach unlimited: answers {@code login}. */
    static final class LoginServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setContentType("text/plain");
            response.getWriter().write("login");
        }
    }

    /**
     * Answers with the status in {@code ?status=} (default 200) after {@code ?sleep=} ms (and,
     * with {@code ?hold=1}, once the test releases it), from an
     * async context when {@code ?async=1}; throws when {@code ?throw=1}; with {@code ?stream=1}
     * writes a body until the client hangs up: an application whose outcome a rule counts by.
     */
    static final class OutcomeServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;
        /** Requests in progress in every app of this JVM, and the most seen at once. */
        private static final java.util.concurrent.atomic.AtomicInteger IN_FLIGHT = new java.util.concurrent.atomic.AtomicInteger();
        private static final java.util.concurrent.atomic.AtomicInteger MAX_IN_FLIGHT = new java.util.concurrent.atomic.AtomicInteger();

        static void resetInFlight() {
            IN_FLIGHT.set(0);
            MAX_IN_FLIGHT.set(0);
        }

        static int maxInFlight() {
            return MAX_IN_FLIGHT.get();
        }

        /** Requests in progress in every app of this JVM now. */
        static int inFlight() {
            return IN_FLIGHT.get();
        }

        /** Requests with {@code hold=1} wait here until {@link #releaseHeld()} (30 s at most). */
        private static volatile java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(0);

        /** From now on, requests with {@code hold=1} wait in the application until released. */
        static void holdRequests() {
            held = new java.util.concurrent.CountDownLatch(1);
        }

        /** Lets every held request go on. */
        static void releaseHeld() {
            held.countDown();
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            MAX_IN_FLIGHT.accumulateAndGet(IN_FLIGHT.incrementAndGet(), Math::max);
            try {
                respond(request, response);
            } finally {
                if (!request.isAsyncStarted()) {
                    IN_FLIGHT.decrementAndGet();
                }
            }
        }

        private void respond(HttpServletRequest request, HttpServletResponse response) throws IOException {
            int status = Integer.parseInt(java.util.Objects.requireNonNullElse(request.getParameter("status"), "200"));
            long sleep = Long.parseLong(java.util.Objects.requireNonNullElse(request.getParameter("sleep"), "0"));
            java.util.concurrent.CountDownLatch gate = "1".equals(request.getParameter("hold")) ? held : null;
            if ("1".equals(request.getParameter("throw"))) {
                pause(sleep, gate);
                throw new IllegalStateException("the application failed");
            }
            // The work's cost, known once it is done: as a response header and a request attribute.
            String tokens = request.getParameter("tokens");
            if ("1".equals(request.getParameter("async"))) {
                jakarta.servlet.AsyncContext async = request.startAsync();
                async.start(() -> {
                    pause(sleep, gate);
                    if (tokens != null) {
                        async.getRequest().setAttribute("tokens", tokenCount(tokens));
                        ((HttpServletResponse) async.getResponse()).setHeader("X-Tokens-Used", tokens);
                    }
                    ((HttpServletResponse) async.getResponse()).setStatus(status);
                    IN_FLIGHT.decrementAndGet();
                    async.complete();
                });
                return;
            }
            pause(sleep, gate);
            if (tokens != null) {
                request.setAttribute("tokens", tokenCount(tokens));
                response.setHeader("X-Tokens-Used", tokens);
            }
            response.setStatus(status);
            response.setContentType("text/plain");
            if ("1".equals(request.getParameter("stream"))) {
                stream(response);
                return;
            }
            response.getWriter().write("outcome " + status);
        }

        /** The count as a number where it is one (an application's usual attribute), else as the text. */
        private static Object tokenCount(String tokens) {
            return tokens.matches("\\d{1,18}") ? (Object) Long.parseLong(tokens) : tokens;
        }

        /**
         * A long body, flushed as it goes, until a write fails (the client hung up) or 64 MiB are
         * out: the failure propagates, as it would from an application that does not expect it.
         */
        private static void stream(HttpServletResponse response) throws IOException {
            byte[] chunk = new byte[16 * 1024];
            java.util.Arrays.fill(chunk, (byte) 'x');
            jakarta.servlet.ServletOutputStream out = response.getOutputStream();
            for (int written = 0; written < 64 * 1024 * 1024; written += chunk.length) {
                out.write(chunk);
                out.flush();
            }
        }

        private static void pause(long millis, java.util.concurrent.CountDownLatch gate) {
            try {
                Thread.sleep(millis);
                if (gate != null) {
                    gate.await(30, java.util.concurrent.TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits until the request sent with {@code X-Test-Id: id} has left the filter chain (the
     * rate-limit filter included, which settles its units before it returns or throws), however
     * it ended.
     *
     * @return whether it did within the time given
     */
    static boolean awaitFinished(String id, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!TestAuthenticator.FINISHED.contains(id)) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /**
     * Authenticates a request as the user named in {@code X-Test-User}, if any, with the roles in
     * {@code X-Test-Roles}; sets the request attribute {@code account.plan} from
     * {@code X-Test-Plan-Attribute}; with {@code X-Test-Spec-Async}, gives the request an async
     * context that keeps to the letter of the spec (see {@link SpecAsyncRequest}). Mapped before
     * the rate-limit filter, it notes when a request with an {@code X-Test-Id} has been through it
     * (see {@link #awaitFinished}).
     */
    static final class TestAuthenticator implements Filter {
        /** The X-Test-Id of every request that has left the chain, in every app of this JVM. */
        static final java.util.Set<String> FINISHED = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String id = ((HttpServletRequest) request).getHeader("X-Test-Id");
            if (((HttpServletRequest) request).getHeader("X-Test-Spec-Async") != null) {
                request = new SpecAsyncRequest((HttpServletRequest) request);
            }
            try {
                authenticate(request, response, chain);
            } finally {
                if (id != null) {
                    FINISHED.add(id);
                }
            }
        }

        private void authenticate(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest http = (HttpServletRequest) request;
            String user = http.getHeader("X-Test-User");
            // What an application's own authentication would set: an attribute naming the plan.
            String plan = http.getHeader("X-Test-Plan-Attribute");
            if (plan != null) {
                http.setAttribute("account.plan", plan);
            }
            if (user == null) {
                chain.doFilter(request, response);
                return;
            }
            Principal principal = () -> user;
            java.util.Set<String> roles = java.util.Set.of(
                    java.util.Objects.requireNonNullElse(http.getHeader("X-Test-Roles"), "").split(","));
            chain.doFilter(new HttpServletRequestWrapper(http) {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }

                @Override
                public String getRemoteUser() {
                    return user;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return roles.contains(role);
                }
            }, response);
        }
    }
}
