package dev.ratelimit.servlet;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.MicroProfileSettingsSource;
import dev.ratelimit.config.OnFailure;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.config.SettingsSource;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.metrics.Metrics;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A servlet filter that holds every instance of an application to one shared set of rate
 * limits kept in Valkey. Register it in {@code web.xml} for {@code /*}; configure it through
 * MicroProfile Config ({@code META-INF/microprofile-config.properties}, system properties or
 * environment variables such as {@code RATELIMIT_RULE_LOGIN_LIMIT}). Settings are read and
 * validated once, in {@link #init}: a bad setting fails the deployment with one message listing
 * every problem.
 *
 * <p>Every request is checked against the rules that match it, all in one call to Valkey. Every
 * response of a matched request carries the {@code RateLimit-Policy} and {@code RateLimit}
 * fields; a rejected one is answered {@code 429} with {@code Retry-After} and an
 * {@code application/problem+json} body.
 *
 * <h2>Global settings</h2>
 * <table>
 *   <caption>Global settings</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code ratelimit.enabled}</td><td>{@code true}</td><td>{@code false} lets every request through
 *       and reads no other setting (a kill switch)</td></tr>
 *   <tr><td>{@code ratelimit.rules}</td><td>(required)</td><td>comma-separated rule names, e.g. {@code api,login}</td></tr>
 *   <tr><td>{@code ratelimit.valkey.url}</td><td>(unset)</td><td>{@code redis://[user:password@]host[:port][/db]}
 *       or {@code rediss://} for TLS. Unset: the in-process limiter, limits per instance (logged once as a warning)</td></tr>
 *   <tr><td>{@code ratelimit.valkey.cluster}</td><td>{@code false}</td><td>{@code true}: the URL names one node
 *       of a Valkey Cluster; the others are discovered</td></tr>
 *   <tr><td>{@code ratelimit.valkey.tls.ca-file}</td><td>(JVM trust store)</td><td>a PEM file of CA certificates
 *       to trust for {@code rediss://}; the server's host name is always verified</td></tr>
 *   <tr><td>{@code ratelimit.valkey.timeout}</td><td>{@code 50ms}</td><td>the longest wait for a reply</td></tr>
 *   <tr><td>{@code ratelimit.valkey.connect-timeout}</td><td>{@code 50ms}</td><td>the longest wait to connect</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pool.max-total}</td><td>{@code 32}</td><td>most connections</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pool.max-idle}</td><td>{@code max-total}</td><td>most idle connections kept</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pool.max-wait}</td><td>{@code 20ms}</td><td>the longest wait for a free connection</td></tr>
 *   <tr><td>{@code ratelimit.key-prefix}</td><td>{@code rl:v1}</td><td>first part of every Valkey key</td></tr>
 *   <tr><td>{@code ratelimit.clock}</td><td>{@code server}</td><td>{@code server}: Valkey's clock;
 *       {@code client}: this JVM's clock</td></tr>
 *   <tr><td>{@code ratelimit.trusted-proxies}</td><td>(none)</td><td>comma-separated IPv4/IPv6 addresses or CIDR
 *       networks whose forwarding header is believed</td></tr>
 *   <tr><td>{@code ratelimit.client-ip-header}</td><td>{@code X-Forwarded-For}</td><td>the forwarding header:
 *       {@code X-Forwarded-For}, {@code Forwarded} (RFC 7239) or another name with one address per hop</td></tr>
 *   <tr><td>{@code ratelimit.ipv6-prefix}</td><td>{@code 64}</td><td>IPv6 clients are counted per network of
 *       this many bits (a /64 is usually one subscriber); 128 counts single addresses</td></tr>
 *   <tr><td>{@code ratelimit.headers}</td><td>{@code draft}</td><td>{@code draft}, {@code legacy}
 *       ({@code X-RateLimit-*}), {@code both} or {@code none}</td></tr>
 *   <tr><td>{@code ratelimit.failure-retry-after}</td><td>{@code 1s}</td><td>{@code Retry-After} of the 503 sent
 *       when a {@code closed} rule cannot reach Valkey</td></tr>
 *   <tr><td>{@code ratelimit.breaker.failures}</td><td>{@code 5}</td><td>consecutive Valkey failures that open the
 *       circuit breaker: no calls, each rule's on-failure policy at once; {@code 0} disables it</td></tr>
 *   <tr><td>{@code ratelimit.breaker.open-for}</td><td>{@code 2s}</td><td>how long the breaker stays open before
 *       one probe call decides whether calls resume</td></tr>
 *   <tr><td>{@code ratelimit.deny-cache.enabled}</td><td>{@code true}</td><td>remember rejections locally until their
 *       retry-after: a client hammering a limit is answered without calling Valkey (not for rules with
 *       {@code count-rejected}, which must see every attempt)</td></tr>
 *   <tr><td>{@code ratelimit.deny-cache.max-entries}</td><td>{@code 10000}</td><td>most rejections remembered</td></tr>
 *   <tr><td>{@code ratelimit.local.max-keys}</td><td>{@code 100000}</td><td>most keys the in-process limiter holds;
 *       past that the least recently used is forgotten</td></tr>
 * </table>
 *
 * <h2>Rule settings, under {@code ratelimit.rule.<name>.}</h2>
 * <table>
 *   <caption>Rule settings</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code limit}</td><td>(required)</td><td>units per window; {@code limit} (or {@code burst}) × window in
 *       ms below 2^50; at most 10,000 for {@code sliding-log}</td></tr>
 *   <tr><td>{@code window}</td><td>(required)</td><td>{@code 500ms}, {@code 30s}, {@code 15m}, {@code 1h},
 *       {@code 1d} or ISO-8601 ({@code PT15M})</td></tr>
 *   <tr><td>{@code algorithm}</td><td>{@code sliding-window-counter}</td><td>{@code fixed-window},
 *       {@code sliding-log}, {@code sliding-window-counter}, {@code token-bucket} or {@code gcra}</td></tr>
 *   <tr><td>{@code burst}</td><td>{@code limit}</td><td>token-bucket and gcra only: units that may be taken at once</td></tr>
 *   <tr><td>{@code match}</td><td>{@code /*}</td><td>comma-separated servlet URL patterns: {@code /exact},
 *       {@code /prefix/*}, {@code *.ext}, {@code /}; matched against the path the container dispatches to</td></tr>
 *   <tr><td>{@code exclude}</td><td>(none)</td><td>URL patterns the rule never applies to</td></tr>
 *   <tr><td>{@code methods}</td><td>(all)</td><td>comma-separated HTTP methods, e.g. {@code POST}</td></tr>
 *   <tr><td>{@code key}</td><td>{@code ip}</td><td>what is counted per: {@code ip}, {@code principal},
 *       {@code principal-or-ip}, {@code path}, {@code header:<name>}, {@code param:<name>}, {@code global},
 *       several joined by {@code +} ({@code ip+path}). A request lacking the value (no principal, no such
 *       header or parameter) is not counted by the rule</td></tr>
 *   <tr><td>{@code lowercase-key}</td><td>{@code false}</td><td>lower-case principal, header and parameter
 *       values first (user names differing only in case are one user)</td></tr>
 *   <tr><td>{@code cost}</td><td>{@code 1}</td><td>units each request takes</td></tr>
 *   <tr><td>{@code count-rejected}</td><td>{@code false}</td><td>rejected requests consume too</td></tr>
 *   <tr><td>{@code on-failure}</td><td>{@code open}</td><td>when Valkey cannot be reached in time, or this rule's
 *       state for the request's key cannot be read: {@code open} allows, {@code closed} answers 503, {@code local}
 *       decides with the in-process limiter</td></tr>
 *   <tr><td>{@code local-limit}</td><td>{@code limit}</td><td>the limit the in-process limiter enforces per instance
 *       for {@code on-failure=local} (the burst shrinks in proportion)</td></tr>
 *   <tr><td>{@code shadow}</td><td>{@code false}</td><td>count and send headers but never reject</td></tr>
 * </table>
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

    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());
    /** The request attribute that marks a request as decided; its value is the headers it got. */
    private static final String DECIDED = RateLimitFilter.class.getName() + ".decided";

    private FilterSettings settings;
    private RateLimiter limiter;
    private LocalRateLimiter fallback;
    private RequestKeys keys;
    private DenyCache denyCache;
    private Metrics metrics;
    private boolean shared;
    private final AtomicBoolean storeDown = new AtomicBoolean();

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
        RateLimitListener listener = RateLimitListener.NONE;
        if (filterConfig != null && filterConfig.getServletContext() != null
                && filterConfig.getServletContext().getAttribute(RateLimitListener.class.getName())
                instanceof RateLimitListener found) {
            listener = found;
        }
        start(readSettings(), listener);
    }

    /** Package-private so tests can start the filter from any settings source. */
    void start(SettingsSource source, RateLimitListener listener) throws ServletException {
        try {
            start(SettingsReader.read(source), listener);
        } catch (InvalidSettingsException e) {
            throw new ServletException(e.getMessage(), e);
        }
    }

    private void start(FilterSettings settings, RateLimitListener listener) {
        this.settings = settings;
        this.keys = new RequestKeys(new ClientAddressResolver(settings.trustedProxies(), settings.clientIpHeader(),
                settings.ipv6Prefix()), settings.clientIpHeader());
        this.fallback = LocalRateLimiter.create(settings.localMaxKeys());
        this.denyCache = settings.denyCacheSize() > 0 ? new DenyCache(settings.denyCacheSize()) : null;
        List<String> names = settings.rules().stream().map(r -> r.rule().name()).toList();
        if (!settings.enabled()) {
            LOG.log(System.Logger.Level.INFO, "Rate limiting is disabled (ratelimit.enabled=false)");
            this.limiter = fallback;
            this.metrics = new Metrics(names, () -> false, listener);
        } else if (settings.valkeyUrl().isPresent()) {
            ValkeySettings valkey = new ValkeySettings(settings.valkeyUrl().get(), settings.connectTimeout(),
                    settings.timeout(), settings.poolMaxTotal(), settings.poolMaxIdle(), settings.poolMaxWait(),
                    settings.tlsCaFile(), settings.cluster());
            AtomicReference<ValkeyRateLimiter> built = new AtomicReference<>();
            this.metrics = new Metrics(names, () -> built.get() != null && built.get().isBreakerOpen(), listener);
            ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder().settings(valkey).keyPrefix(settings.keyPrefix())
                    .circuitBreaker(settings.breakerFailures(), settings.breakerOpenFor()).listener(metrics);
            if (settings.clientClock()) {
                builder.clientClock(System::currentTimeMillis);
            }
            try {
                built.set(builder.build());
            } catch (RuntimeException e) {
                // Only a cluster client connects while being built: it must learn the slot layout.
                throw new IllegalStateException("RateLimitFilter cannot reach the Valkey Cluster at "
                        + valkey.redactedUrl() + " to learn its slots: " + e.getMessage(), e);
            }
            this.limiter = built.get();
            this.shared = true;
            LOG.log(System.Logger.Level.INFO, "Rate limiting {0} on {1}", names, valkey.redactedUrl());
        } else {
            this.limiter = fallback;
            this.metrics = new Metrics(names, () -> false, listener);
            LOG.log(System.Logger.Level.WARNING, "Rate limiting {0} IN THIS PROCESS ONLY: ratelimit.valkey.url is "
                    + "not set, so each instance of the application enforces the limits on its own", names);
        }
        metrics.registerMBeans();
    }

    private static SettingsSource readSettings() throws ServletException {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = RateLimitFilter.class.getClassLoader();
        }
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

    /**
     * Checks the request against its rules, answers 429 (or 503) itself when it must, and
     * otherwise passes it on with the rate-limit headers set.
     */
    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!settings.enabled() || !(req instanceof HttpServletRequest request)
                || !(res instanceof HttpServletResponse response)) {
            chain.doFilter(req, res);
            return;
        }
        // One client request is decided once, whatever dispatches it goes through (REQUEST, then
        // FORWARD, ASYNC, ERROR...): later dispatches only put back the headers it was given.
        if (request.getAttribute(DECIDED) instanceof Map<?, ?> fields) {
            @SuppressWarnings("unchecked")
            Map<String, String> headers = (Map<String, String>) fields;
            RateLimitHeaders.restore(response, headers);
            chain.doFilter(request, response);
            return;
        }
        List<RuleSettings> rules = new ArrayList<>();
        List<Claim> claims = new ArrayList<>();
        collectClaims(request, rules, claims);
        if (claims.isEmpty()) {
            request.setAttribute(DECIDED, Map.of());
            chain.doFilter(request, response);
        } else if (!decide(request, rules, claims, response)) {
            chain.doFilter(request, response);
        }
    }

    /** The rules that apply to the request and have a key for it, with their claims. */
    private void collectClaims(HttpServletRequest request, List<RuleSettings> rules, List<Claim> claims) {
        String path = path(request);
        String method = request.getMethod();
        // Resolved once, and only if a rule's key needs it (walking forwarding headers costs).
        String[] clientAddress = new String[1];
        Supplier<String> address = () -> {
            if (clientAddress[0] == null) {
                clientAddress[0] = keys.clientAddress(request);
            }
            return clientAddress[0];
        };
        for (RuleSettings rule : settings.rules()) {
            if (!rule.appliesTo(method, path)) {
                continue;
            }
            Optional<String> key = keys.key(rule, request, path, address);
            if (key.isPresent()) {
                rules.add(rule);
                claims.add(Claim.of(rule.rule(), key.get(), rule.cost()));
            }
        }
    }

    /**
     * Decides the claims and writes headers; answers the request itself when it is rejected.
     *
     * <p>Rules the store cannot decide are answered by their on-failure policy: all of them when
     * Valkey cannot be reached, one of them when only its state for this key cannot be read
     * (the others then decide as usual).
     *
     * @return true when the request was answered here (429 or 503)
     */
    private boolean decide(HttpServletRequest request, List<RuleSettings> rules, List<Claim> claims,
                           HttpServletResponse response) throws IOException {
        request.setAttribute(DECIDED, Map.of());
        long now = System.currentTimeMillis();
        if (answeredFromDenyCache(rules, claims, response, now)) {
            return true;
        }
        List<Integer> shared = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            shared.add(i);
        }
        List<Integer> byPolicy = new ArrayList<>();
        Decisions sharedDecisions = null;
        while (!shared.isEmpty() && sharedDecisions == null) {
            try {
                sharedDecisions = limiter.acquireAll(pick(claims, shared));
                if (this.shared && storeDown.compareAndSet(true, false)) {
                    LOG.log(System.Logger.Level.INFO, "Valkey answers again: shared rate limits are enforced again");
                }
            } catch (UnreadableStateException e) {
                // One key's fault: that rule alone falls to its policy; the limiter logged it once.
                int bad = shared.stream().filter(i -> rules.get(i).rule().name().equals(e.rule())).findFirst()
                        .orElse(shared.get(0));
                shared.remove(Integer.valueOf(bad));
                byPolicy.add(bad);
                if (closesOnFailure(rules.get(bad))) {
                    return unavailable(response, rules, byPolicy);
                }
            } catch (RuntimeException e) {
                // Nothing the limiter throws may reach the application as a 500.
                if (storeDown.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "Valkey cannot be reached; applying each rule''s on-failure "
                            + "policy until it answers again: {0}", e.getMessage());
                }
                byPolicy.addAll(shared);
                shared.clear();
            }
        }
        for (int i : byPolicy) {
            if (closesOnFailure(rules.get(i))) {
                return unavailable(response, rules, byPolicy);
            }
        }
        for (int i : byPolicy) {
            metrics.onEvent(rules.get(i).rule().name(), RateLimitListener.Event.STORE_ERROR);
            metrics.onEvent(rules.get(i).rule().name(), RateLimitListener.Event.FALLBACK);
        }
        List<Integer> local = byPolicy.stream().filter(i -> rules.get(i).onFailure() == OnFailure.LOCAL).sorted().toList();
        Decisions localDecisions = null;
        if (!local.isEmpty()) {
            List<Claim> localClaims = new ArrayList<>(local.size());
            for (int i : local) {
                RuleSettings rule = rules.get(i);
                localClaims.add(Claim.of(rule.localRule(), claims.get(i).key(),
                        Math.min(claims.get(i).cost(), rule.localRule().capacity())));
            }
            localDecisions = fallback.acquireAll(localClaims);
        }
        if (sharedDecisions == null && localDecisions == null) {
            return false;
        }

        List<RateLimitHeaders.Entry> entries = new ArrayList<>();
        boolean allowed = true;
        Duration retryAfter = Duration.ZERO;
        for (Decisions decided : new Decisions[] {sharedDecisions, localDecisions}) {
            if (decided == null) {
                continue;
            }
            List<Integer> indexes = decided == sharedDecisions ? shared : local;
            for (int j = 0; j < indexes.size(); j++) {
                RuleSettings settingsOfRule = rules.get(indexes.get(j));
                // A local decision is announced with the limit it enforces, not the shared one.
                Rule rule = decided == sharedDecisions ? settingsOfRule.rule() : settingsOfRule.localRule();
                Decision decision = decided.decisions().get(j);
                entries.add(new RateLimitHeaders.Entry(rule, decision));
                metrics.onEvent(rule.name(), decision.allowed() ? RateLimitListener.Event.ALLOWED
                        : rule.shadow() ? RateLimitListener.Event.SHADOW_REJECTED : RateLimitListener.Event.REJECTED);
                if (!decision.allowed() && denyCache != null && !rule.shadow() && !rule.countRejected()
                        && decided == sharedDecisions) {
                    denyCache.deny(rule.name(), claims.get(indexes.get(j)).key(), decision, now);
                }
            }
            allowed &= decided.allowed();
            if (decided.retryAfter().compareTo(retryAfter) > 0) {
                retryAfter = decided.retryAfter();
            }
        }
        request.setAttribute(DECIDED, RateLimitHeaders.write(response, settings.headers(), entries));
        if (allowed) {
            return false;
        }
        Rejections.tooManyRequests(response, rejectingRule(entries, retryAfter), retryAfter);
        return true;
    }

    private static boolean closesOnFailure(RuleSettings rule) {
        return rule.onFailure() == OnFailure.CLOSED && !rule.rule().shadow();
    }

    /** Answers 503 for the first closed rule among those the store could not decide. */
    private boolean unavailable(HttpServletResponse response, List<RuleSettings> rules, List<Integer> byPolicy)
            throws IOException {
        for (int i : byPolicy) {
            metrics.onEvent(rules.get(i).rule().name(), RateLimitListener.Event.STORE_ERROR);
            metrics.onEvent(rules.get(i).rule().name(), RateLimitListener.Event.FALLBACK);
        }
        String closed = byPolicy.stream().map(rules::get).filter(RateLimitFilter::closesOnFailure)
                .map(r -> r.rule().name()).findFirst().orElseThrow();
        Rejections.unavailable(response, closed, settings.failureRetryAfter());
        return true;
    }

    private static List<Claim> pick(List<Claim> claims, List<Integer> indexes) {
        List<Claim> picked = new ArrayList<>(indexes.size());
        for (int i : indexes) {
            picked.add(claims.get(i));
        }
        return picked;
    }

    /**
     * Rejects the request locally when one of its enforcing rules rejected the same key moments
     * ago and the announced retry-after has not passed: the store would say the same. Not for a
     * request that a count-rejected rule must see (to record the attempt), whichever rule
     * rejected it before.
     */
    private boolean answeredFromDenyCache(List<RuleSettings> rules, List<Claim> claims, HttpServletResponse response,
                                          long now) throws IOException {
        if (denyCache == null || rules.stream().anyMatch(r -> r.rule().countRejected())) {
            return false;
        }
        List<RateLimitHeaders.Entry> denied = new ArrayList<>();
        Duration longest = Duration.ZERO;
        String rejecting = null;
        for (int i = 0; i < rules.size(); i++) {
            Rule rule = rules.get(i).rule();
            if (rule.shadow()) {
                continue;
            }
            Optional<Decision> rejection = denyCache.denied(rule.name(), claims.get(i).key(), now);
            if (rejection.isPresent()) {
                denied.add(new RateLimitHeaders.Entry(rule, rejection.get()));
                metrics.onEvent(rule.name(), RateLimitListener.Event.REJECTED);
                if (rejection.get().retryAfter().compareTo(longest) > 0) {
                    longest = rejection.get().retryAfter();
                    rejecting = rule.name();
                }
            }
        }
        if (denied.isEmpty()) {
            return false;
        }
        RateLimitHeaders.write(response, settings.headers(), denied);
        Rejections.tooManyRequests(response, rejecting, longest);
        return true;
    }

    /** The enforcing rule that keeps the request out longest: the one the client must wait for. */
    private static String rejectingRule(List<RateLimitHeaders.Entry> entries, Duration retryAfter) {
        String first = null;
        for (RateLimitHeaders.Entry entry : entries) {
            if (!entry.rule().shadow() && !entry.decision().allowed()) {
                if (entry.decision().retryAfter().equals(retryAfter)) {
                    return entry.rule().name();
                }
                first = first == null ? entry.rule().name() : first;
            }
        }
        // Longer than any rejecting rule's own wait: a count-rejected rule the rejection charged.
        return first != null ? first : entries.get(0).rule().name();
    }

    /** The path within the application the container dispatches to, already decoded and normalised. */
    private static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        return path.isEmpty() ? "/" : path;
    }

    /**
     * Closes the connections to Valkey, the in-process limiter and unregisters the MBeans. Never
     * throws: every resource is released even if releasing another one failed.
     */
    @Override
    public void destroy() {
        Metrics m = metrics;
        RateLimiter shared = limiter;
        LocalRateLimiter local = fallback;
        Teardown.quietly("its JMX MBeans", m == null ? null : m::unregisterMBeans);
        Teardown.quietly("its Valkey connections", shared == null || shared == local ? null : shared::close);
        Teardown.quietly("its in-process limiter", local == null ? null : local::close);
    }
}
