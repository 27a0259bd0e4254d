package dev.ratelimit.it.checker;

import dev.ratelimit.it.EditableConfigSource;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.jakarta.RateLimitsInitializer;
import dev.ratelimit.servlet.LimitProvider;
import dev.ratelimit.servlet.RateLimitFilter;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.jboss.weld.environment.se.WeldContainer;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The filter as an application deploys it, on a real Jetty 12, for the checker over HTTP:
 * {@link RateLimitFilter} (async supported, every dispatcher type) in front of a servlet that
 * answers what each request asks ({@code ?status=}, after {@code ?sleep=} ms, from an async
 * context with {@code ?async=1}, throwing with {@code ?throw=1}, writing a long body with
 * {@code ?stream=1}), settings from a source the checker changes while the app runs
 * ({@code ratelimit.refresh}), the checker's {@link LimitProvider}, and a listener that hands
 * each request's per-rule decisions to the checker. Jersey serves the {@code @RateLimited}
 * resource methods of {@link HttpMethods} under {@code /j/*} and {@code /s<mask>/j/*}
 * ({@code RateLimitedFeature}, deciding by the same {@code RateLimits} as the filter), one of
 * which calls the CDI bean {@link HttpBean} (Weld SE, its interceptor started with the context).
 *
 * <p>A first filter, before the rate-limit filter, tags the request thread with the request's
 * {@code X-Check-Id} (so the listener's events are the request's), notes when the request reached
 * the application (the filter had decided by then) and when it left the filter chain, settled
 * (for an async request: when it completed, after the filter's own completion listener); it also
 * stands for an authentication in front of the limiter: an {@code X-User} header is the request's
 * principal; and for an application's filter that sets things on the response before the limiter
 * runs ({@code X-Pre}, {@link HttpWorkload#PRES}).
 *
 * <p>Started once per test class and reused by every seed: each seed brings its own settings
 * (read by a refresh) and its own keys.
 */
final class HttpApp implements AutoCloseable {

    /** What a request with an {@code X-Check-Id} did in the app. */
    static final class Trace {
        /** The listener's events on the request thread: "rule EVENT". */
        final List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
        /** The filter's ms ({@link #now}) at which the application was reached, or -1. */
        volatile long reached = -1;
        /** The filter's ms at which the request left the chain, settled, or -1. */
        volatile long finished = -1;
    }

    private static final ThreadLocal<Trace> CURRENT = new ThreadLocal<>();

    private final Server server;
    private final ClassLoader loader;
    private final EditableConfigSource settings;
    private final HttpProvider provider;
    private final Map<String, Trace> traces = new ConcurrentHashMap<>();
    /** The filter's clock ({@link #now}): this JVM's wall clock moved by a run's offset. */
    private final Clock clock = new Clock();
    /** The CDI container of the app's bean, started once the servlet context is. */
    private volatile WeldContainer weld;
    private volatile HttpBean bean;

    private HttpApp(Server server, ClassLoader loader, EditableConfigSource settings, HttpProvider provider) {
        this.server = server;
        this.loader = loader;
        this.settings = settings;
        this.provider = provider;
    }

    /**
     * Starts an app on these first settings.
     *
     * @param initial the settings to start with (must be valid)
     * @return the started app
     * @throws Exception whatever Jetty throws when it cannot start
     */
    static HttpApp start(Map<String, String> initial) throws Exception {
        EditableConfigSource settings = new EditableConfigSource("checker", 400);
        settings.values.putAll(initial);
        HttpProvider provider = new HttpProvider();
        ClassLoader loader = new URLClassLoader(new URL[0], HttpApp.class.getClassLoader());
        ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder().withSources(settings).build(),
                loader);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.setClassLoader(loader);
        HttpApp app = new HttpApp(server, loader, settings, provider);
        context.setAttribute(LimitProvider.class.getName(), provider);
        // The filter's clock: a run sets the date it runs at, whatever the day it runs on.
        context.setAttribute(java.time.InstantSource.class.getName(), app.clock);
        context.setAttribute(RateLimitListener.class.getName(), new RateLimitListener() {
            @Override
            public void onEvent(String rule, Event event) {
                Trace trace = CURRENT.get();
                if (trace != null) {
                    trace.events.add(rule + " " + event.name());
                }
            }
        });
        FilterHolder tracker = new FilterHolder(app.new Tracker());
        tracker.setAsyncSupported(true);
        context.addFilter(tracker, "/*", EnumSet.of(DispatcherType.REQUEST));
        FilterHolder limiter = new FilterHolder(RateLimitFilter.class);
        limiter.setAsyncSupported(true);
        context.addFilter(limiter, "/*", EnumSet.allOf(DispatcherType.class));
        ServletHolder answers = new ServletHolder(app.new Answering());
        answers.setAsyncSupported(true);
        context.addServlet(answers, "/");
        context.addServletContainerInitializer(new RateLimitsInitializer());
        ServletHolder jersey = HttpMethods.servlet(id -> app.trace(id).reached = app.now(),
                () -> app.bean);
        context.addServlet(jersey, "/j/*");
        for (int mask = 1; mask < 1 << HttpWorkload.MAX_RULES; mask++) {
            // The filter's rules match /s<mask>/*: these requests are decided by both.
            context.addServlet(jersey, "/s" + mask + "/j/*");
        }
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        if (!context.isAvailable()) {
            server.stop();
            throw new IllegalStateException("the checker's app did not become available");
        }
        try {
            app.weld = HttpCdi.start(loader, context.getServletContext());
            app.bean = app.weld.select(HttpBean.class).get();
        } catch (RuntimeException | Error e) {
            server.stop();
            throw e;
        }
        return app;
    }

    /** The port it listens on, on 127.0.0.1. */
    int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** The filter's time, epoch ms: the wall clock moved to the date of the run ({@link #startClockAt}). */
    long now() {
        return clock.millis();
    }

    /**
     * Moves the filter's clock so that it reads {@code epochMillis} now, and goes on at the wall
     * clock's pace: a seed runs at the date it draws, on any day.
     *
     * @param epochMillis the time the clock reads from now on
     */
    void startClockAt(long epochMillis) {
        clock.offset = epochMillis - System.currentTimeMillis();
    }

    /** The wall clock plus an offset a run sets. */
    private static final class Clock implements java.time.InstantSource {
        volatile long offset;

        @Override
        public long millis() {
            return System.currentTimeMillis() + offset;
        }

        @Override
        public java.time.Instant instant() {
            return java.time.Instant.ofEpochMilli(millis());
        }
    }

    /** The settings source: what a refresh reads. */
    Map<String, String> settings() {
        return settings.values;
    }

    /** The application's limit provider. */
    HttpProvider provider() {
        return provider;
    }

    /**
     * The trace of a request, created when first asked (before the request is sent).
     *
     * @param id the request's {@code X-Check-Id}
     * @return its trace
     */
    Trace trace(String id) {
        return traces.computeIfAbsent(id, k -> new Trace());
    }

    /** Forgets a request's trace. */
    void forget(String id) {
        traces.remove(id);
    }

    @Override
    public void close() throws Exception {
        if (weld != null) {
            weld.shutdown();
        }
        server.stop();
        ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
    }

    /** Tags the request thread and notes when the request has left the chain, settled. */
    private final class Tracker implements Filter {
        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String id = ((HttpServletRequest) request).getHeader("X-Check-Id");
            Trace trace = id == null ? null : trace(id);
            CURRENT.set(trace);
            boolean later = false;
            String user = ((HttpServletRequest) request).getHeader("X-User");
            pre(((HttpServletRequest) request).getHeader("X-Pre"), (HttpServletResponse) response);
            try {
                chain.doFilter(user == null ? request : authenticated((HttpServletRequest) request, user), response);
                if (trace != null && request.isAsyncStarted()) {
                    // Added after the rate-limit filter's own listener, so called after it has settled.
                    request.getAsyncContext().addListener(new Finished(trace, HttpApp.this::now));
                    later = true;
                }
            } finally {
                CURRENT.remove();
                if (trace != null && !later) {
                    trace.finished = now();
                }
            }
        }
    }

    /**
     * Does to the response what an application's filter before the limiter may
     * ({@link HttpWorkload#PRES}): nothing the application's own answer minds, all of it what the
     * limiter's 429 must not carry or must survive.
     */
    private static void pre(String pre, HttpServletResponse response) throws IOException {
        if (pre == null) {
            return;
        }
        switch (pre) {
            case "own-content" -> {
                response.setHeader("content-encoding", "identity");
                response.setHeader("ETag", "\"v1\"");
                response.setHeader("Last-Modified", "Sun, 06 Dec 2026 00:00:00 GMT");
            }
            case "locale" -> response.setLocale(java.util.Locale.FRANCE);
            case "trailers" -> response.setTrailerFields(() -> Map.of("X-Own-Trailer", "1"));
            case "chunked" -> response.setHeader("Transfer-Encoding", "chunked");
            case "small-buffer" -> response.setBufferSize(16);
            default -> throw new IllegalArgumentException("X-Pre: " + pre);
        }
    }

    /** The request as an authentication in front of the limiter leaves it: with the principal named. */
    private static HttpServletRequest authenticated(HttpServletRequest request, String user) {
        java.security.Principal principal = () -> user;
        return new jakarta.servlet.http.HttpServletRequestWrapper(request) {
            @Override
            public java.security.Principal getUserPrincipal() {
                return principal;
            }

            @Override
            public String getRemoteUser() {
                return user;
            }
        };
    }

    /** Marks an async request finished once it completed. */
    private record Finished(Trace trace, java.util.function.LongSupplier clock) implements AsyncListener {
        @Override
        public void onComplete(AsyncEvent event) {
            trace.finished = clock.getAsLong();
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // onComplete follows.
        }

        @Override
        public void onError(AsyncEvent event) {
            // onComplete follows.
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this);
        }
    }

    /** Answers what the request asks for. */
    private final class Answering extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            String id = request.getHeader("X-Check-Id");
            if (id != null) {
                trace(id).reached = now();
            }
            int status = Integer.parseInt(Objects.requireNonNullElse(request.getParameter("status"), "200"));
            long sleep = Long.parseLong(Objects.requireNonNullElse(request.getParameter("sleep"), "0"));
            if ("1".equals(request.getParameter("throw"))) {
                pause(sleep);
                throw new IllegalStateException("the application failed");
            }
            if ("1".equals(request.getParameter("async"))) {
                AsyncContext async = request.startAsync();
                async.start(() -> {
                    pause(sleep);
                    ((HttpServletResponse) async.getResponse()).setStatus(status);
                    async.complete();
                });
                return;
            }
            pause(sleep);
            response.setStatus(status);
            response.setContentType("text/plain");
            if ("1".equals(request.getParameter("stream"))) {
                // A long body, flushed as it goes, until a write fails (the client hung up).
                byte[] chunk = new byte[16 * 1024];
                java.util.Arrays.fill(chunk, (byte) 'x');
                ServletOutputStream out = response.getOutputStream();
                for (int written = 0; written < 64 * 1024 * 1024; written += chunk.length) {
                    out.write(chunk);
                    out.flush();
                }
                return;
            }
            response.getWriter().write("outcome " + status);
        }

        private void pause(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
