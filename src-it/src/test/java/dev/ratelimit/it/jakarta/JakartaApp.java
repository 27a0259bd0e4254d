package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimitExceededMapper;
import dev.ratelimit.jakarta.RateLimitedFeature;
import dev.ratelimit.jakarta.RateLimitsInitializer;
import dev.ratelimit.servlet.RateLimitFilter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletContext;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.ee10.servlet.ServletMapping;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.EventListener;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * A real Jetty 12 server running a Jersey application: no {@code web.xml}, the rate limits
 * started by {@link RateLimitedFeature} from the application's own MicroProfile Config (SmallRye,
 * from the given map, in a class loader of the app's own, as a deployment has), and
 * {@link RateLimitFilter} in front only when asked for.
 */
final class JakartaApp implements AutoCloseable {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Server server;
    private final ServletContextHandler context;
    private final ClassLoader loader;
    private final Object[] resources;
    private final boolean mapper;

    /**
     * For the next start only (then back to true): whether the Jersey application registers
     * {@code RateLimitExceededMapper}, or maps a refusal itself.
     */
    static volatile boolean withMapper = true;
    /** For the next start only (then back to none): servlets by path, registered before Jersey's {@code /*}. */
    static volatile Map<String, jakarta.servlet.Servlet> servlets = Map.of();

    private JakartaApp(Server server, ServletContextHandler context, ClassLoader loader, Object[] resources,
                       boolean mapper) {
        this.server = server;
        this.context = context;
        this.loader = loader;
        this.resources = resources;
        this.mapper = mapper;
    }

    /**
     * Starts an app serving the given resources (classes or instances) under {@code /*}.
     *
     * @param settings   the MicroProfile Config properties
     * @param withFilter whether {@link RateLimitFilter} is registered for {@code /*} too
     * @param resources  resource classes or instances
     * @throws Exception whatever Jetty throws, e.g. Jersey's start failing on a bad annotation
     */
    static JakartaApp start(Map<String, String> settings, boolean withFilter, Object... resources) throws Exception {
        return start(new PropertiesConfigSource(settings, "test", 100), withFilter, resources);
    }

    /**
     * Starts an app whose settings come from a source that may change while it runs
     * ({@code ratelimit.refresh}).
     *
     * @param source     the MicroProfile Config source
     * @param withFilter whether {@link RateLimitFilter} is registered for {@code /*} too
     * @param resources  resource classes or instances
     * @throws Exception whatever Jetty throws
     */
    static JakartaApp start(ConfigSource source, boolean withFilter, Object... resources) throws Exception {
        return startWithListeners(source, withFilter, List.of(), resources);
    }

    /**
     * Starts an app with the application's own listeners, registered before the library's (as a
     * {@code web.xml} or annotated listener is): stopped after the library's, in reverse order.
     *
     * @param source     the MicroProfile Config source
     * @param withFilter whether {@link RateLimitFilter} is registered for {@code /*} too
     * @param listeners  the application's listeners, e.g. a {@code ServletContextListener}
     * @param resources  resource classes or instances
     * @throws Exception whatever Jetty throws
     */
    static JakartaApp startWithListeners(ConfigSource source, boolean withFilter, List<? extends EventListener> listeners,
                                         Object... resources) throws Exception {
        boolean mapper = withMapper;
        Map<String, jakarta.servlet.Servlet> extra = servlets;
        withMapper = true;
        servlets = Map.of();
        ClassLoader loader = new URLClassLoader(new URL[0], JakartaApp.class.getClassLoader());
        ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder()
                .withSources(source).build(), loader);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.setClassLoader(loader);
        listeners.forEach(context::addEventListener);
        // What a container does with the library's META-INF/services entry.
        context.addServletContainerInitializer(new RateLimitsInitializer());
        if (withFilter) {
            FilterHolder limiter = new FilterHolder(RateLimitFilter.class);
            limiter.setAsyncSupported(true);
            context.addFilter(limiter, "/*", EnumSet.allOf(DispatcherType.class));
        }
        extra.forEach((path, servlet) -> {
            ServletHolder holder = new ServletHolder(servlet);
            holder.setAsyncSupported(true);
            context.addServlet(holder, path);
        });
        context.addServlet(jersey(mapper, resources), "/*");
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
            ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
            throw new IllegalStateException("the context did not become available");
        }
        return new JakartaApp(server, context, loader, resources, mapper);
    }

    /** The Jersey servlet serving the resources; a new one for each start (Jersey's configuration is used once). */
    private static ServletHolder jersey(boolean mapper, Object... resources) {
        ResourceConfig application = mapper
                ? new ResourceConfig(RateLimitedFeature.class, RateLimitExceededMapper.class)
                : new ResourceConfig(RateLimitedFeature.class);
        for (Object resource : resources) {
            if (resource instanceof Class<?> type) {
                application.register(type);
            } else {
                application.register(resource);
            }
        }
        ServletHolder jersey = new ServletHolder(new ServletContainer(application));
        // Started with the app, as a server starts a Jakarta REST application: a bad annotation fails the start.
        jersey.setInitOrder(1);
        jersey.setAsyncSupported(true);
        return jersey;
    }

    /** Settings on the given Valkey with a generous reply timeout, plus property/value pairs. */
    static Map<String, String> settings(String valkeyUrl, String... pairs) {
        Map<String, String> settings = new HashMap<>();
        settings.put("ratelimit.valkey.url", valkeyUrl);
        settings.put("ratelimit.valkey.timeout", "2s");
        for (int i = 0; i < pairs.length; i += 2) {
            settings.put(pairs[i], pairs[i + 1]);
        }
        return settings;
    }

    /**
     * The same settings with every rule a route rule (no {@code scope}): what the filter applies,
     * to compare with what an annotation does under the same rule as a method rule.
     */
    static Map<String, String> routeRules(Map<String, String> settings) {
        Map<String, String> route = new HashMap<>(settings);
        route.keySet().removeIf(name -> name.startsWith("ratelimit.rule.") && name.endsWith(".scope"));
        return route;
    }

    /**
     * Reads the app's settings again now ({@code RateLimits.refreshNow()}): once it returns, a
     * reading made after every edit before the call is applied or refused.
     */
    void refreshSettings() throws Exception {
        if (!dev.ratelimit.servlet.RateLimits.of(context.getServletContext()).refreshNow()) {
            throw new IllegalStateException("no settings refresh runs: set ratelimit.refresh");
        }
    }

    /** The application's servlet context, as a Jakarta EE server gives it to CDI at start. */
    ServletContext servletContext() {
        return context.getServletContext();
    }

    /**
     * Stops the application and starts it again in the same servlet context, as a container's
     * reload of a changed application may.
     *
     * @throws Exception whatever Jetty throws
     */
    void restart() throws Exception {
        context.stop();
        context.getServletHandler().setServletMappings(new ServletMapping[0]);
        context.getServletHandler().setServlets(new ServletHolder[0]);
        context.addServlet(jersey(mapper, resources), "/*");
        context.start();
    }

    /** Runs code with the application's class loader as the thread's, as the server runs its code. */
    <T> T inApp(Callable<T> code) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return code.call();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort()
                + pathAndQuery);
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> postForm(String path, String form) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() throws Exception {
        server.stop();
        ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
    }
}
