package dev.ratelimit.servlet;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.config.MicroProfileSettingsSource;
import dev.ratelimit.config.SettingsSource;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * What the filter finds at start-up in the application it runs in: the {@link RateLimitListener}
 * and {@link LimitProvider} it offers (in the servlet context, else as services), its clock (a
 * {@link InstantSource} in the servlet context, else the system's), the deployment's
 * name for the MBeans, and the settings through MicroProfile Config. Looked up once per
 * application, by {@link RateLimits#of} (which {@link RateLimitFilter#init} calls too).
 *
 * @param listener   where rate-limit events go, {@link RateLimitListener#NONE} when nowhere
 * @param provider   the application's own limits, or null
 * @param clock      the time of day the filter reads when it does not ask Valkey's
 * @param deployment the deployment as its MBeans name it (see {@link #deploymentOf})
 */
record ApplicationServices(RateLimitListener listener, LimitProvider provider, InstantSource clock,
                           String deployment) {

    // The filter's own logger name: operators configure the filter's logging by its class.
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    /**
     * Finds what the application offers. The servlet context's attributes win over services: an
     * application that sets one means that one.
     *
     * @param context the application's servlet context, or null (then only services count)
     */
    static ApplicationServices of(ServletContext context) {
        RateLimitListener listener = RateLimitListener.NONE;
        LimitProvider provider = null;
        InstantSource clock = InstantSource.system();
        if (context != null) {
            if (context.getAttribute(InstantSource.class.getName()) instanceof InstantSource found) {
                clock = found;
            }
            if (context.getAttribute(RateLimitListener.class.getName()) instanceof RateLimitListener found) {
                listener = found;
            }
            if (context.getAttribute(LimitProvider.class.getName())
                    instanceof LimitProvider found) {
                provider = found;
            }
        }
        if (provider == null) {
            provider = services(LimitProvider.class).stream().findFirst().orElse(null);
        }
        if (listener == RateLimitListener.NONE && context != null) {
            // A metrics library on the class path, e.g. ratelimit-micrometer: no code needed.
            for (ListenerProvider found : services(ListenerProvider.class)) {
                Optional<RateLimitListener> offered = found.listenerFor(context);
                if (offered.isPresent()) {
                    listener = offered.get();
                    LOG.log(System.Logger.Level.INFO, "Rate-limit events go to {0}", listener.getClass().getName());
                    break;
                }
            }
        }
        return new ApplicationServices(listener, provider, clock, deploymentOf(context));
    }

    /**
     * The deployment, as its MBeans name it: the virtual server and the context path, so that the
     * same application redeployed takes over its names and another keeps its own.
     */
    private static String deploymentOf(ServletContext context) {
        if (context == null) {
            return "";
        }
        String server;
        try {
            server = context.getVirtualServerName();
        } catch (UnsupportedOperationException e) {
            server = null;
        }
        String path = context.getContextPath();
        // The root context's path is "", which would read as no deployment at all.
        return (server == null ? "" : server) + (path == null || path.isEmpty() ? "/" : path);
    }

    /**
     * The services of a type the application offers. One that cannot be loaded (a JAR of the
     * container's, compiled against another copy of this library) is skipped and logged.
     */
    private static <T> List<T> services(Class<T> type) {
        List<T> found = new ArrayList<>();
        Iterator<T> it = ServiceLoader.load(type, contextLoader()).iterator();
        // Bounded: an iterator that failed on an entry moves past it, but a broken one must not spin.
        for (int tries = 0; tries < 100; tries++) {
            try {
                if (!it.hasNext()) {
                    return found;
                }
                found.add(it.next());
            } catch (ServiceConfigurationError e) {
                LOG.log(System.Logger.Level.WARNING, "A {0} service cannot be used and is skipped: {1}",
                        type.getSimpleName(), e.getMessage());
            }
        }
        return found;
    }

    /** The application's class loader: the container's thread context loader, else this library's. */
    private static ClassLoader contextLoader() {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return loader != null ? loader : RateLimitFilter.class.getClassLoader();
    }

    /**
     * The settings, through the application's MicroProfile Config.
     *
     * @throws ServletException naming what to add when the API or an implementation is missing
     */
    static SettingsSource settings() throws ServletException {
        ClassLoader loader = contextLoader();
        try {
            return MicroProfileSettingsSource.forClassLoader(loader);
        } catch (NoClassDefFoundError e) {
            throw new ServletException("RateLimitFilter needs the MicroProfile Config API "
                    + "(org.eclipse.microprofile.config:microprofile-config-api) and an implementation: add "
                    + "io.smallrye.config:smallrye-config to the application, or deploy on a MicroProfile server", e);
        } catch (IllegalStateException | ServiceConfigurationError e) {
            throw new ServletException("RateLimitFilter found no MicroProfile Config implementation: add one to the "
                    + "application (e.g. io.smallrye.config:smallrye-config) or deploy on a MicroProfile server ("
                    + e.getMessage() + ")", e);
        }
    }
}
