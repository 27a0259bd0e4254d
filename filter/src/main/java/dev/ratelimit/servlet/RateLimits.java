package dev.ratelimit.servlet;

import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * <p>Every layer of one request shares its account ({@link RequestAccount}): a rule is decided
 * once per request and key, a refusal by any layer gives back what the others took, and the
 * fields name every rule decided.
 */
public final class RateLimits {

    private static final String ATTRIBUTE = RateLimits.class.getName();

    private final RunningFilter running;

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
                running.start(ApplicationServices.settings(), found.listener(), found.provider(), found.clock(),
                        found.deployment());
            } catch (ServletException | RuntimeException e) {
                running.stop();
                throw e;
            }
            RateLimits limits = new RateLimits(running);
            context.setAttribute(ATTRIBUTE, limits);
            CheckBacklog.take(context).forEach(check -> checkReadings(context, check));
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
            CheckBacklog.take(context);
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
     * Reads the settings again now, as {@code ratelimit.refresh} does every so often, and returns
     * once the reading is applied or refused (a refused reading is logged, and the running
     * settings kept): for an operator or a deployment tool that changed a configuration source
     * and wants it applied without waiting for the next reading.
     *
     * @return false when {@code ratelimit.refresh} is not set (nothing is read again), or the
     *         limits are off or stopped
     * @throws IllegalStateException when the reading does not end within 60 s
     * @throws InterruptedException  when interrupted while waiting
     */
    public boolean refreshNow() throws InterruptedException {
        return running.refreshNow();
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
         * Whether a rule is a method rule ({@code scope=method}): applied where {@code @RateLimited}
         * names it, never by the filter. An annotation may name only such a rule.
         *
         * @param rule a rule's name, one of {@link #rules()}
         * @return true for a method rule
         * @throws IllegalArgumentException naming the rule when no rule has that name
         */
        boolean methodRule(String rule);

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
                CheckBacklog.add(context, check);
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
     * Decides the request of an annotated Jakarta REST resource method on the rules it names, as
     * a part of the request's account ({@link RequestAccount}): all or nothing, leaving out the
     * rules a layer before it (the filter) decided for the request under the same key. A refusal
     * gives back at once what the request's other layers took. The units of rules that count by
     * outcome ({@code count-when}, {@code refund-when}) or hold a lease ({@code concurrency}) are
     * reserved, to be settled by {@link MethodDecision#settle} once the response's status is known.
     *
     * @param request        the HTTP request, or null outside a servlet container: then rules
     *                       whose key needs the client address are left out
     * @param resourceMethod the resource method: its CDI interceptor, if any, passes the invocation
     * @param rules          the rules the method names
     * @param parameters     the method's parameters by the names the rules' {@code param:} parts use
     * @return the decision; {@link MethodDecision#allowed()} when no rule was left to decide
     */
    public MethodDecision decideRequest(HttpServletRequest request, Object resourceMethod, List<String> rules,
                                        Map<String, String> parameters) {
        return decide(request, resourceMethod, rules, parameters, false, RequestAccount.Layer.RESOURCE, false);
    }

    /**
     * Decides the request of an annotated Jakarta REST resource method as
     * {@link #decideRequest(HttpServletRequest, Object, List, Map)} does, and where a rule with a
     * {@code max-delay} admits it for a slot to come, holds it for that slot: the method must not
     * run now ({@link MethodDecision#held()}); the filter suspends the request, drops what Jakarta
     * REST writes for it, and dispatches it again at its slot, where this call, made again for
     * the same method, gives back the same decision for the method to run by. A request is held
     * only where the filter passed it on and can suspend it, and no layer before counted it by a
     * rule that paces requests; else such a rule decides as if it did not delay.
     *
     * @param request        the HTTP request, or null outside a servlet container
     * @param resourceMethod the resource method
     * @param rules          the rules the method names
     * @param parameters     the method's parameters by the names the rules' {@code param:} parts use
     * @param mayHold        whether the method can run at a second dispatch of the request as
     *                       it would run now (the body its layers read before is read again)
     * @return the decision
     */
    public MethodDecision decideRequest(HttpServletRequest request, Object resourceMethod, List<String> rules,
                                        Map<String, String> parameters, boolean mayHold) {
        return decide(request, resourceMethod, rules, parameters, false, RequestAccount.Layer.RESOURCE, mayHold);
    }

    /**
     * Decides one call of a CDI method on the rules it names, as a part of the account of the
     * request it serves, if any: each call counts (a request may send several mails), but the
     * invocation of a resource method the Jakarta REST filter decided already is passed without
     * a decision. A refusal is thrown to the application, which may catch it; it gives back what
     * the request's other layers took only when it becomes the request's answer
     * ({@link MethodDecision#answered}, or the filter answering it).
     *
     * @param request    the HTTP request the call serves, or null (a call from a timer, a message)
     * @param method     the method called
     * @param rules      the rules the method names
     * @param parameters the method's parameters by the names the rules' {@code param:} parts use
     * @param reserve    whether the units are reserved whatever the rules say: a method whose
     *                   annotations list exceptions after which the call is given back
     * @return the decision
     */
    public MethodDecision decideCall(HttpServletRequest request, Object method, List<String> rules,
                                     Map<String, String> parameters, boolean reserve) {
        return decide(request, method, rules, parameters, reserve, RequestAccount.Layer.CALL, false);
    }

    private MethodDecision decide(HttpServletRequest request, Object method, List<String> rules,
                                  Map<String, String> parameters, boolean reserve, RequestAccount.Layer layer,
                                  boolean mayHold) {
        RunningFilter.Active now = running.active();
        RequestAccount account = RequestAccount.of(request, now.settings(), now.clock());
        if (!running.enabled() || layer == RequestAccount.Layer.CALL && account.passesResourceMethod(method)) {
            return new MethodDecision(now, account, RequestAccount.NONE);
        }
        if (layer == RequestAccount.Layer.RESOURCE) {
            RequestAccount.Part resumed = account.resumeResource(method);
            if (resumed != null) {
                // The dispatch at the slot of a request this method's rules held: it runs now.
                account.resourceMethodDecided(method);
                return new MethodDecision(now, account, resumed);
            }
        }
        List<RuleSettings> named = new ArrayList<>(rules.size());
        for (RuleSettings rule : now.settings().rules()) {
            if (rules.contains(rule.rule().name()) && (request != null || !needsAddress(rule))) {
                named.add(rule);
            }
        }
        List<RequestKeys.Matched> matched = now.keys().named(new MethodRequestView(request, parameters), named);
        // A CDI call runs on the caller's thread: its rules never delay (refused instead).
        boolean mayDelay = mayHold && request != null && account.resourceMayHold() && now.delayed().mayHold(request);
        RequestAccount.Part part;
        try {
            part = account.decide(now, matched, layer, reserve, mayDelay);
            Duration delay = part.allowed() ? part.reservation().decisions().delay() : Duration.ZERO;
            if (!delay.isZero()) {
                account.holdResource(part, method, now.delayed(), delay);
                return new MethodDecision(now, account, part, true);
            }
        } finally {
            if (mayDelay) {
                now.delayed().decided();
            }
        }
        if (layer == RequestAccount.Layer.RESOURCE && part.allowed()) {
            account.resourceMethodDecided(method);
        }
        return new MethodDecision(now, account, part);
    }

    /**
     * The rate-limit header fields of every rule decided for a request so far, by any layer (a
     * CDI method a resource method called, say), for a response of this status: what a response
     * no annotated method's filter writes carries.
     *
     * @param request the request, or null
     * @param status  the response's status
     * @return name to value, in order; empty when no rule was decided, or on a 3xx unless
     *         {@code ratelimit.headers.on-redirects}
     */
    public static Map<String, String> fields(HttpServletRequest request, int status) {
        RequestAccount account = RequestAccount.find(request);
        if (account == null || !account.fieldsOnRedirects() && RateLimitHeaders.isRedirection(status)) {
            return Map.of();
        }
        return account.fields();
    }

    /** Whether a rule's key needs the client's address, which a call outside a request has not. */
    private static boolean needsAddress(RuleSettings rule) {
        return rule.key().parts().stream().anyMatch(p -> p.kind() == KeySpec.Kind.IP
                || p.kind() == KeySpec.Kind.PRINCIPAL_OR_IP);
    }
}
