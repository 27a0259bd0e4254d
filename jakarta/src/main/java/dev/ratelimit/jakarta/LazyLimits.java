package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.RateLimits;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;

import java.util.function.Consumer;

/**
 * An application's {@link RateLimits}, started at the first call that needs them rather than when
 * Jakarta REST configures its resources: a server may do that before the application's own
 * listeners run, and the limits would miss what those put in the servlet context for them (a
 * metrics registry, a listener). The annotations are checked at configuration all the same,
 * against a reading of the settings taken then; the first start checks every later reading.
 */
final class LazyLimits {

    private final ServletContext context;
    private final Consumer<RateLimits.Reading> check;
    private volatile RateLimits started;

    private LazyLimits(ServletContext context, Consumer<RateLimits.Reading> check) {
        this.context = context;
        this.check = check;
    }

    /**
     * Checks a method's annotations against the settings now, and defers the start.
     *
     * @throws IllegalStateException naming the method and the value, for an unknown rule or parameter
     * @throws ServletException when the settings cannot be read (no MicroProfile Config, invalid settings)
     */
    static LazyLimits checked(ServletContext context, Consumer<RateLimits.Reading> check) throws ServletException {
        LazyLimits limits = new LazyLimits(context, check);
        if (context.getAttribute(RateLimits.class.getName()) instanceof RateLimits) {
            limits.get(); // started already (the filter's init): join and check them now
        } else {
            check.accept(limits.inApplication(RateLimits::configured));
        }
        return limits;
    }

    /** The running limits, started (or joined) at the first call. */
    RateLimits get() {
        RateLimits limits = started;
        if (limits == null) {
            synchronized (this) {
                if (started == null) {
                    try {
                        RateLimits running = inApplication(() -> RateLimits.of(context));
                        check.accept(running.reading());
                        // A refresh that drops or re-keys the method's rules is refused, as the start would have failed.
                        running.checkReadings(check);
                        started = running;
                    } catch (ServletException e) {
                        throw new IllegalStateException(e.getMessage(), e);
                    }
                }
                limits = started;
            }
        }
        return limits;
    }

    /** What reads the settings, as it must run. */
    private interface SettingsCall<T> {
        T call() throws ServletException;
    }

    /**
     * Runs with the application's class loader as the thread's context loader: MicroProfile
     * Config is found by it, and the first call, or the check, may come on a thread of another
     * (a pool's, a test's, a CDI container's start).
     */
    private <T> T inApplication(SettingsCall<T> call) throws ServletException {
        Thread thread = Thread.currentThread();
        ClassLoader caller = thread.getContextClassLoader();
        ClassLoader application = context.getClassLoader();
        thread.setContextClassLoader(application != null ? application : caller);
        try {
            return call.call();
        } finally {
            thread.setContextClassLoader(caller);
        }
    }
}
