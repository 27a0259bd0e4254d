package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.servlet.RateLimitFilter;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** One Jetty app with the filter for the tests of held requests, recording when the app ran each request. */
final class DelayJetty implements AutoCloseable {

    /** One run of the application: epoch ms (nanoTime-based ms too), and the request's X-Id / X-K headers. */
    record Ran(long nanos, long epochMs, String id, String k) {
    }

    final Server server;
    final ClassLoader loader;

    private DelayJetty(Server server, ClassLoader loader) {
        this.server = server;
        this.loader = loader;
    }

    static DelayJetty start(ConfigSource source, RateLimitListener listener, Queue<Ran> ran, boolean asyncMapped)
            throws Exception {
        ClassLoader loader = new URLClassLoader(new URL[0], DelayJetty.class.getClassLoader());
        ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder()
                .withSources(source).build(), loader);
        Server server = new Server(new QueuedThreadPool(32, 4));
        ServerConnector connector = new ServerConnector(server, 1, 1);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.setIdleTimeout(60_000);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.setClassLoader(loader);
        if (listener != null) {
            context.setAttribute(RateLimitListener.class.getName(), listener);
        }
        FilterHolder limiter = new FilterHolder(RateLimitFilter.class);
        limiter.setAsyncSupported(true);
        context.addFilter(limiter, "/*", asyncMapped ? EnumSet.allOf(DispatcherType.class)
                : EnumSet.of(DispatcherType.REQUEST));
        ServletHolder run = new ServletHolder(new RunServlet(ran));
        run.setAsyncSupported(true);
        context.addServlet(run, "/*");
        server.setHandler(context);
        server.start();
        return new DelayJetty(server, loader);
    }

    int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port() + path);
    }

    CompletableFuture<HttpResponse<String>> send(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return JettyApp.HTTP.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    void undeploy() throws Exception {
        server.getHandler().stop();
    }

    @Override
    public void close() throws Exception {
        server.stop();
        ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
    }

    static final class RunServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient Queue<Ran> ran;

        RunServlet(Queue<Ran> ran) {
            this.ran = ran;
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            ran.add(new Ran(System.nanoTime(), System.currentTimeMillis(), request.getHeader("X-Id"),
                    request.getHeader("X-K")));
            String status = request.getParameter("status");
            if (status != null) {
                response.setStatus(Integer.parseInt(status));
            }
            response.setContentType("text/plain");
            response.getWriter().write("ran");
        }
    }

    /** Counts events and longest delay. */
    static final class Events implements RateLimitListener {
        final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
        final Map<String, AtomicLong> longest = new ConcurrentHashMap<>();

        @Override
        public void onEvent(String rule, Event event) {
            counts.computeIfAbsent(rule + ' ' + event, k -> new AtomicLong()).incrementAndGet();
        }

        @Override
        public void onDelay(String rule, long nanos) {
            longest.computeIfAbsent(rule, k -> new AtomicLong()).accumulateAndGet(nanos, Math::max);
        }

        long count(String rule, Event event) {
            AtomicLong c = counts.get(rule + ' ' + event);
            return c == null ? 0 : c.get();
        }
    }

    static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(2);
        }
    }

    static io.smallrye.config.PropertiesConfigSource props(Map<String, String> settings) {
        return new io.smallrye.config.PropertiesConfigSource(settings, "delay", 100);
    }
}
