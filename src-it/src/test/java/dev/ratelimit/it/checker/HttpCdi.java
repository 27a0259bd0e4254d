package dev.ratelimit.it.checker;

import dev.ratelimit.jakarta.RateLimitedExtension;
import dev.ratelimit.jakarta.RateLimitedInterceptor;
import dev.ratelimit.jakarta.RateLimitedListInterceptor;
import dev.ratelimit.jakarta.RateLimitedMethods;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.servlet.ServletContext;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.environment.se.WeldContainer;

/**
 * The CDI container of the checker's app: Weld SE with the library's extension and
 * interceptors and {@link HttpBean}, handed the app's servlet context as a Jakarta EE server
 * does at a web application's start (so its interceptor decides by the app's one
 * {@code RateLimits}).
 */
final class HttpCdi {

    private HttpCdi() {
    }

    /**
     * Starts the container.
     *
     * @param loader  the app's class loader (its MicroProfile Config is registered for it)
     * @param context the app's servlet context, started
     * @return the container, to shut down with the app
     */
    static WeldContainer start(ClassLoader loader, ServletContext context) {
        WeldContainer weld = new Weld("ratelimit-checker-" + System.nanoTime()).disableDiscovery()
                .addExtension(new RateLimitedExtension())
                .addBeanClasses(RateLimitedMethods.class, RateLimitedInterceptor.class, RateLimitedListInterceptor.class,
                        HttpBean.class, HttpRequests.class).initialize();
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            weld.getBeanManager().getEvent().select(Initialized.Literal.of(ApplicationScoped.class)).fire(context);
            return weld;
        } catch (RuntimeException | Error e) {
            weld.shutdown();
            throw e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }
}
