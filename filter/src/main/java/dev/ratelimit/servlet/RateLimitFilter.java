package dev.ratelimit.servlet;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.config.SettingsSource;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.InstantSource;

/**
 * A servlet filter that holds every instance of an application to one shared set of rate
 * limits kept in Valkey. Register it in {@code web.xml} for {@code /*}; configure it through
 * MicroProfile Config ({@code META-INF/microprofile-config.properties}, system properties or
 * environment variables such as {@code RATELIMIT_RULE_LOGIN_LIMIT}). Settings are read and
 * validated once, in {@link #init}: a bad setting fails the deployment with one message listing
 * every problem.
 *
 * <p>Every request is checked against the rules that match it, all in one call to Valkey. Every
 * response of a matched request (but a 3xx, unless {@code ratelimit.headers.on-redirects}) carries
 * the {@code RateLimit-Policy} and {@code RateLimit} fields; a rejected one is answered
 * {@code 429} with {@code Retry-After} and an {@code application/problem+json} body of the draft's
 * {@code quota-exceeded} problem type.
 *
 * <p>Every setting, its default and its meaning: the settings reference, {@code docs/settings.md}
 * in the project's sources.
 *
 * <p>Counters per rule (allowed, rejected, shadow-rejected, store errors, fallback decisions) and the
 * breaker's state are published as JMX MBeans {@code dev.ratelimit:type=RateLimiter,rule=<name>}
 * and passed to a {@link RateLimitListener} found in the servlet context attribute named
 * {@code dev.ratelimit.RateLimitListener}.
 *
 * <p>Declare the filter {@code <async-supported>true</async-supported>}: a container refuses
 * {@code startAsync} to every servlet behind a filter that does not declare it. The filter
 * itself never goes asynchronous; it decides before the chain runs. It may be mapped for any
 * dispatcher types ({@code REQUEST}, {@code FORWARD}, {@code INCLUDE}, {@code ASYNC},
 * {@code ERROR}): one client request is decided once, at the first dispatch the filter sees,
 * and later dispatches of it (a forward, an async dispatch, an error page after
 * {@code sendError} or an exception) are passed through with the headers it was given put
 * back if the response lost them.
 *
 * <p>A {@code param:} key reads a request parameter, which for a form POST makes the container
 * read the body: the application can still call {@code getParameter}, but no longer
 * {@code getInputStream}.
 */
public final class RateLimitFilter implements Filter {

    // The filter's rooms: ApplicationServices (what init finds in the application),
    // RunningFilter (what the settings start, and their teardown), DispatchHandler (each request).
    /** What the filter runs on once started; an unstarted one passes every request through. */
    private RunningFilter running = new RunningFilter();
    /** The servlet context whose {@link RateLimits} the filter shares, or null when started apart. */
    private ServletContext shared;
    /** How each dispatch of a request is handled. */
    private final DispatchHandler dispatches = new DispatchHandler();

    /** The filter, configured in {@link #init}. */
    public RateLimitFilter() {
    }

    /**
     * Reads and validates the settings through MicroProfile Config and connects the limiter.
     *
     * @param filterConfig the container's filter configuration; its servlet context may hold a
     *                     {@link RateLimitListener} under the attribute {@code dev.ratelimit.RateLimitListener}
     * @throws ServletException when no MicroProfile Config implementation is present, or the
     *                          settings are invalid (the message lists every problem)
     */
    @Override
    public void init(FilterConfig filterConfig) throws ServletException {
        if (filterConfig != null && filterConfig.getServletContext() != null) {
            // The application's one stack, which annotated methods decide by as well.
            shared = filterConfig.getServletContext();
            running = RateLimits.of(shared).running();
            return;
        }
        ApplicationServices found = ApplicationServices.of((ServletContext) null);
        running.start(ApplicationServices.settings(), found.listener(), found.provider(), found.clock(),
                found.deployment());
    }

    /** Package-private so tests can start the filter from any settings source. */
    void start(SettingsSource source, RateLimitListener listener) throws ServletException {
        running.start(source, listener, null, InstantSource.system(), "");
    }

    /**
     * Checks the request against its rules, answers 429 (or 503) itself when it must, and
     * otherwise passes it on with the rate-limit headers set.
     */
    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!running.enabled() || !(req instanceof HttpServletRequest request)
                || !(res instanceof HttpServletResponse response)) {
            chain.doFilter(req, res);
            return;
        }
        dispatches.handle(running.active(), request, response, chain);
    }

    /**
     * Closes the connections to Valkey, the in-process limiter and unregisters the MBeans. Never
     * throws: every resource is released even if releasing another one failed.
     */
    @Override
    public void destroy() {
        if (shared != null) {
            RateLimits.stop(shared);
        } else {
            running.stop();
        }
    }
}
