package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.RateLimits;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * An application's {@link RateLimits}, started at the first call that needs them rather than when
 * Jakarta REST configures its resources: a server may do that before the application's own
 * listeners run, and the limits would miss what those put in the servlet context for them (a
 * metrics registry, a listener). The annotations are checked at configuration all the same,
 * against a reading of the settings taken then, and every reading a refresh makes once they
 * started, whoever started them (the filter's init, another method's first call).
 */
final class LazyLimits {

    /**
     * The servlet context attribute listing the application's lazy limits, so that its stop can
     * close those never started; {@link #STOPPED} once it stopped.
     */
    private static final String ATTRIBUTE = LazyLimits.class.getName();
    private static final Object STOPPED = "stopped";

    private final ServletContext context;
    private final Consumer<RateLimits.Reading> check;
    private volatile RateLimits started;
    /** Whether the application stopped before these limits started: then they never start. */
    private boolean closed;

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
        register(context, limits);
        if (context.getAttribute(RateLimits.class.getName()) instanceof RateLimits) {
            limits.get(); // started already (the filter's init): join and check them now
        } else {
            check.accept(limits.inApplication(RateLimits::configured));
        }
        // From their start on, whoever starts them and whenever this method is first called, a
        // refresh that drops or re-keys the method's rules is refused, as the start would have failed.
        RateLimits.checkReadings(context, check);
        return limits;
    }

    /** The running limits, started (or joined) at the first call. */
    RateLimits get() {
        RateLimits limits = started;
        if (limits == null) {
            synchronized (this) {
                if (started == null) {
                    if (closed) {
                        // A start now would leave a stack (connections, MBeans) nothing stops.
                        throw new IllegalStateException("@RateLimited: the application's limits stopped with the "
                                + "application before this call started them; a call made while it stops is not decided");
                    }
                    try {
                        RateLimits running = inApplication(() -> RateLimits.of(context));
                        check.accept(running.reading());
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

    /**
     * Notes a new instance in its application's list; one made after the application stopped
     * is closed at once.
     */
    private static void register(ServletContext context, LazyLimits limits) {
        synchronized (LazyLimits.class) {
            Object listed = context.getAttribute(ATTRIBUTE);
            if (listed == STOPPED) {
                limits.close();
            } else if (listed instanceof List<?> known) {
                @SuppressWarnings("unchecked")
                List<LazyLimits> all = (List<LazyLimits>) known;
                all.add(limits);
            } else {
                List<LazyLimits> all = new CopyOnWriteArrayList<>();
                all.add(limits);
                context.setAttribute(ATTRIBUTE, all);
            }
        }
    }

    /**
     * Called as the application stops, before its {@link RateLimits} stop: those of its lazy
     * limits never started never will. A call made while the application stops (a listener's
     * {@code contextDestroyed}, a bean's {@code @PreDestroy}) would otherwise start a stack after
     * the stop, which nothing would stop.
     *
     * @param context the application's servlet context
     */
    static void stopping(ServletContext context) {
        List<LazyLimits> all = List.of();
        synchronized (LazyLimits.class) {
            if (context.getAttribute(ATTRIBUTE) instanceof List<?> known) {
                @SuppressWarnings("unchecked")
                List<LazyLimits> listed = (List<LazyLimits>) known;
                all = listed;
            }
            context.setAttribute(ATTRIBUTE, STOPPED);
        }
        all.forEach(LazyLimits::close);
    }

    /** Forgets a previous life of the servlet context: a container may start the same one again. */
    static void starting(ServletContext context) {
        synchronized (LazyLimits.class) {
            context.removeAttribute(ATTRIBUTE);
        }
    }

    /** Never starts from now on; a start in progress ends first (the limits it started are stopped next). */
    private synchronized void close() {
        closed = true;
    }

    /**
     * Checks every reading a refresh makes from now on, or from the start.
     *
     * @param more throws {@link IllegalStateException} naming the problem
     */
    void checkReadings(Consumer<RateLimits.Reading> more) {
        RateLimits.checkReadings(context, more);
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
