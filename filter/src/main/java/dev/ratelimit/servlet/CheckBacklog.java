package dev.ratelimit.servlet;

import jakarta.servlet.ServletContext;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Checks of refreshed readings asked for before an application's {@link RateLimits} started (an
 * annotated method checked at CDI's or Jakarta REST's start, before the filter's {@code init} or
 * the first call starts them), kept in its servlet context until they start. Used under the
 * lock of {@link RateLimits}.
 */
final class CheckBacklog {

    private static final String ATTRIBUTE = RateLimits.class.getName() + ".pendingChecks";

    private CheckBacklog() {
    }

    /** Keeps a check for the start. */
    static void add(ServletContext context, Consumer<RateLimits.Reading> check) {
        List<Consumer<RateLimits.Reading>> pending = new ArrayList<>(of(context));
        pending.add(check);
        context.setAttribute(ATTRIBUTE, List.copyOf(pending));
    }

    /** The checks kept, now forgotten: the limits starting take them, or the application stopped. */
    static List<Consumer<RateLimits.Reading>> take(ServletContext context) {
        List<Consumer<RateLimits.Reading>> pending = of(context);
        context.removeAttribute(ATTRIBUTE);
        return pending;
    }

    @SuppressWarnings("unchecked")
    private static List<Consumer<RateLimits.Reading>> of(ServletContext context) {
        return context.getAttribute(ATTRIBUTE) instanceof List<?> kept ? (List<Consumer<RateLimits.Reading>>) kept
                : List.of();
    }
}
