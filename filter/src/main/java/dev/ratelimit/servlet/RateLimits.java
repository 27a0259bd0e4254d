package dev.ratelimit.servlet;

import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * An application's running rate limits, for the ways in other than the filter: annotated Jakarta
 * REST resource methods and CDI bean methods ({@code ratelimit-jakarta}). One per servlet
 * context, kept in its attribute {@code dev.ratelimit.servlet.RateLimits}: started from the
 * application's MicroProfile Config by whichever asks first, the filter's {@code init} or an
 * annotated method's deployment, so that an application with no filter registered at all is
 * limited by the same settings, decision path (policies, deny cache, metrics, leases), headers
 * and problem bodies as one with it.
 *
 * <p>A rule is decided once per request: the rules the filter, or an annotated method, decided for
 * a request are named in its attribute {@link #DECIDED_RULES}, and {@link #decide} leaves them
 * out (a resource method that is a CDI bean too is seen by the REST filter and the interceptor).
 */
public final class RateLimits {

    /**
     * The request attribute naming the rules the filter decided for a request (a
     * {@code Set<String>}): an annotated method serving the same request does not count them again.
     */
    public static final String DECIDED_RULES = RateLimits.class.getName() + ".decidedRules";
    private static final String ATTRIBUTE = RateLimits.class.getName();

    // The filter's own logger name: operators configure the filter's logging by its class.
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    private final RunningFilter running;
    /** Whether a failure of the limiter itself was logged: once per application, not once per call. */
    private final AtomicBoolean unexpectedLogged = new AtomicBoolean();

    private RateLimits(RunningFilter running) {
        this.running = running;
    }

    /**
     * The application's running limits, started now from its MicroProfile Config unless the
     * filter or an earlier call started them.
     *
     * @param context the application's servlet context
     * @return its limits
     * @throws ServletException when no MicroProfile Config implementation is present, or the
     *                          settings are invalid (the message lists every problem)
     */
    public static RateLimits of(ServletContext context) throws ServletException {
        synchronized (RateLimits.class) {
            if (context.getAttribute(ATTRIBUTE) instanceof RateLimits started) {
                return started;
            }
            ApplicationServices found = ApplicationServices.of(context);
            RunningFilter running = new RunningFilter();
            try {
                running.start(ApplicationServices.settings(), found.listener(), found.provider(), found.deployment());
            } catch (ServletException | RuntimeException e) {
                running.stop();
                throw e;
            }
            RateLimits limits = new RateLimits(running);
            context.setAttribute(ATTRIBUTE, limits);
            PendingChecks.take(context).forEach(check -> checkReadings(context, check));
            return limits;
        }
    }

    /**
     * Stops the application's limits, if started (connections, MBeans, refresh); never throws.
     *
     * @param context the application's servlet context
     */
    public static void stop(ServletContext context) {
        synchronized (RateLimits.class) {
            PendingChecks.take(context);
            if (context.getAttribute(ATTRIBUTE) instanceof RateLimits started) {
                context.removeAttribute(ATTRIBUTE);
                started.running.stop();
            }
        }
    }

    /** What the filter runs on, when it shares the application's limits. */
    RunningFilter running() {
        return running;
    }

    /**
     * Whether the limits are on ({@code ratelimit.enabled}); when not, {@link #decide} decides nothing.
     *
     * @return true when enabled
     */
    public boolean enabled() {
        return running.enabled();
    }

    /**
     * The configured rules' names, in the order of {@code ratelimit.rules}.
     *
     * @return the names
     */
    public List<String> rules() {
        return SettingsReading.of(running.active().settings()).rules();
    }

    /**
     * The rules of one reading of the settings, as an annotated method's check sees them.
     */
    public interface Reading {

        /**
         * The configured rules' names, in the order of {@code ratelimit.rules}.
         *
         * @return the names
         */
        List<String> rules();

        /**
         * A rule's key, part by part as written in its {@code key} setting.
         *
         * @param rule a rule's name, one of {@link #rules()}
         * @return the parts, e.g. {@code ip}, {@code param:username}
         */
        List<String> keyParts(String rule);

        /**
         * Whether the limits are on: the kill switch ({@code ratelimit.enabled=false}) reads no rule.
         *
         * @return false when switched off
         */
        boolean enabled();
    }

    /**
     * The running settings' rules, for an annotated method's check at the application's start.
     *
     * @return the reading requests are decided by now
     */
    public Reading reading() {
        return SettingsReading.of(running.active().settings());
    }

    /**
     * Checks each reading a refresh ({@code ratelimit.refresh}) of the application's limits makes
     * before it applies, from their start (now, if started): one that fails, such as a reading
     * without a rule an annotated method names, is refused whole and the running settings kept,
     * as the application would have failed to start with it.
     *
     * @param context the application's servlet context
     * @param check   throws {@link IllegalStateException} naming the problem
     */
    public static void checkReadings(ServletContext context, Consumer<Reading> check) {
        synchronized (RateLimits.class) {
            if (context.getAttribute(ATTRIBUTE) instanceof RateLimits started) {
                started.running.checkReadings(settings -> check.accept(SettingsReading.of(settings)));
            } else {
                PendingChecks.add(context, check);
            }
        }
    }

    /**
     * The rules of the application's settings as they read now, through the MicroProfile Config
     * the limits would start from: for a check made before the limits start (a server may
     * configure an application's resources before its listeners run, and the limits should not
     * start without what those give them).
     *
     * @return the rules read
     * @throws ServletException when no MicroProfile Config is found, naming what to add
     * @throws dev.ratelimit.config.InvalidSettingsException listing every problem of the settings
     */
    public static Reading configured() throws ServletException {
        // Silent: made once per annotated method; the start logs the warnings (an unlisted rule...) once.
        return SettingsReading.of(SettingsReader.read(ApplicationServices.settings(), warning -> { }));
    }

    /**
     * A rule's key, part by part as written in its {@code key} setting, e.g. {@code ip},
     * {@code param:username}: an annotated method must have a parameter of each {@code param:} name.
     *
     * @param rule a rule's name
     * @return the parts
     * @throws IllegalArgumentException naming the rule when no rule has that name
     */
    public List<String> keyParts(String rule) {
        return SettingsReading.of(running.active().settings()).keyParts(rule);
    }

    /**
     * Decides one call of an annotated method on the rules it names, all or nothing, as the filter
     * decides a request: the units of rules that count by outcome ({@code count-when},
     * {@code refund-when}) or hold a lease ({@code concurrency}) are reserved, to be settled by
     * {@link MethodDecision#settle} once the call's outcome is known.
     *
     * @param request    the HTTP request the call serves, or null (a CDI method called outside
     *                   one): then rules whose key needs the client address are left out
     * @param rules      the rules the method names
     * @param parameters the method's parameters by the names the rules' {@code param:} parts use
     * @return the decision; {@link MethodDecision#allowed()} when no rule was left to decide
     */
    public MethodDecision decide(HttpServletRequest request, List<String> rules, Map<String, String> parameters) {
        return decide(request, rules, parameters, false, true);
    }

    /**
     * Decides one call of a CDI method as {@link #decide(HttpServletRequest, List, Map)} decides a
     * resource method's request, reserving its units whatever its rules say when asked: a CDI
     * method whose annotations list exceptions after which the call is given back
     * ({@link MethodDecision#giveBack}). It leaves out the rules the filter or the resource method
     * decided for the request, but names none itself in {@link #DECIDED_RULES}: a request may call
     * a CDI method many times (a batch, a loop), and each call counts.
     *
     * @param request    the HTTP request the call serves, or null
     * @param rules      the rules the method names
     * @param parameters the method's parameters by the names the rules' {@code param:} parts use
     * @param reserve    whether the units are reserved, to be kept or given back after the call
     * @return the decision
     */
    public MethodDecision decide(HttpServletRequest request, List<String> rules, Map<String, String> parameters,
                                 boolean reserve) {
        return decide(request, rules, parameters, reserve, false);
    }

    /**
     * Decides a call; {@code record} names its rules in the request's {@link #DECIDED_RULES}, for a
     * decision once per request (a resource method's, which a CDI interceptor on the same method
     * must not repeat), not once per call.
     */
    private MethodDecision decide(HttpServletRequest request, List<String> rules, Map<String, String> parameters,
                                  boolean reserve, boolean record) {
        if (!running.enabled()) {
            return MethodDecision.none();
        }
        RunningFilter.Active now = running.active();
        Set<?> decided = request != null && request.getAttribute(DECIDED_RULES) instanceof Set<?> names ? names : Set.of();
        List<RuleSettings> named = new ArrayList<>(rules.size());
        for (RuleSettings rule : now.settings().rules()) {
            if (rules.contains(rule.rule().name()) && !decided.contains(rule.rule().name())
                    && (request != null || !needsAddress(rule))) {
                named.add(rule);
            }
        }
        RequestKeys.Matched matched = now.keys().named(new MethodRequestView(request, parameters), named);
        if (matched.claims().isEmpty()) {
            return MethodDecision.none();
        }
        if (request != null && record) {
            // A CDI interceptor on the same resource method then skips them: one decision per rule.
            Set<Object> decidedNow = new HashSet<>(decided);
            matched.rules().forEach(r -> decidedNow.add(r.rule().name()));
            request.setAttribute(DECIDED_RULES, Set.copyOf(decidedNow));
        }
        boolean byOutcome = reserve || OutcomeCounting.applies(matched.rules());
        Reservation reservation;
        try {
            reservation = byOutcome ? now.limiter().reserveAll(matched.claims())
                    : Reservation.kept(now.limiter().acquireAll(matched.claims()));
        } catch (RuntimeException | Error e) {
            // As the filter: the limiter applies every policy itself; this is a bug, and no failure for it.
            if (unexpectedLogged.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.ERROR, "RateLimits could not decide a call of an annotated method; "
                        + "letting calls through that fail so (logged once)", e);
            }
            return MethodDecision.none();
        }
        Decisions decisions = reservation.decisions();
        ProblemDetails problem = null;
        List<RateLimitHeaders.Entry> entries = List.of();
        if (decisions.unavailable()) {
            problem = Rejections.reducedCapacity(decisions, now.settings().failureRetryAfter());
        } else {
            entries = Dispatches.entries(matched, decisions);
            if (!decisions.allowed()) {
                problem = Rejections.quotaExceeded(entries, decisions.retryAfter());
            }
        }
        return new MethodDecision(reservation, matched.rules(), RateLimitHeaders.fields(now.settings().headers(), entries),
                now.settings().headersOnRedirects(), problem);
    }

    /** Whether a rule's key needs the client's address, which a call outside a request has not. */
    private static boolean needsAddress(RuleSettings rule) {
        return rule.key().parts().stream().anyMatch(p -> p.kind() == KeySpec.Kind.IP
                || p.kind() == KeySpec.Kind.PRINCIPAL_OR_IP);
    }
}
