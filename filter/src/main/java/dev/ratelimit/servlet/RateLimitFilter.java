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
 *   <tr><td>{@code ratelimit.valkey.sentinel.master}</td><td>(unset)</td><td>the name Valkey Sentinel monitors the
 *       primary by; with it the URL's host and port are not used (its scheme, credentials and database are, for the
 *       primary and the sentinels) and the limiter follows the primary through failovers</td></tr>
 *   <tr><td>{@code ratelimit.valkey.sentinel.nodes}</td><td>(unset)</td><td>the sentinels, {@code host:port,host:port};
 *       required with {@code sentinel.master}. At least one must answer at start-up</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pool.max-total}</td><td>{@code 32}</td><td>most connections</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pool.max-idle}</td><td>{@code max-total}</td><td>most idle connections kept</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pool.max-wait}</td><td>{@code 20ms}</td><td>the longest wait for a free connection</td></tr>
 *   <tr><td>{@code ratelimit.valkey.pipelines}</td><td>{@code 2}</td><td>most calls or pipelines on the wire at
 *       once: the calls of threads that arrive while that many are in flight are sent together in the next pipeline,
 *       one round trip for many decisions; {@code 0} sends every call on its own connection. Not used on a
 *       cluster</td></tr>
 *   <tr><td>{@code ratelimit.key-prefix}</td><td>{@code rl:v1}</td><td>first part of every Valkey key</td></tr>
 *   <tr><td>{@code ratelimit.clock}</td><td>{@code server}</td><td>{@code server}: Valkey's clock;
 *       {@code client}: this JVM's clock</td></tr>
 *   <tr><td>{@code ratelimit.trusted-proxies}</td><td>(none)</td><td>comma-separated IPv4/IPv6 addresses or CIDR
 *       networks whose forwarding header is believed</td></tr>
 *   <tr><td>{@code ratelimit.client-ip-header}</td><td>{@code X-Forwarded-For}</td><td>the forwarding header:
 *       {@code X-Forwarded-For}, {@code Forwarded} (RFC 7239) or another name with one address per hop</td></tr>
 *   <tr><td>{@code ratelimit.ipv6-prefix}</td><td>{@code 64}</td><td>IPv6 clients are counted per network of
 *       this many bits (a /64 is usually one subscriber); 128 counts single addresses</td></tr>
 *   <tr><td>{@code ratelimit.headers}</td><td>{@code draft}</td><td>{@code draft} ({@code RateLimit-Policy} and
 *       {@code RateLimit}, draft-ietf-httpapi-ratelimit-headers-11), {@code draft-03} ({@code RateLimit-Limit},
 *       {@code -Remaining}, {@code -Reset} of draft -03), {@code legacy} ({@code X-RateLimit-*}), {@code both}
 *       ({@code draft} and {@code legacy}) or {@code none}</td></tr>
 *   <tr><td>{@code ratelimit.headers.on-redirects}</td><td>{@code false}</td><td>whether 3xx responses carry the
 *       rate-limit fields: the draft warns that a low remaining value on a redirection can make a client wait
 *       before following it</td></tr>
 *   <tr><td>{@code ratelimit.failure-retry-after}</td><td>{@code 1s}</td><td>{@code Retry-After} of the 503 sent
 *       when a {@code closed} rule cannot reach Valkey</td></tr>
 *   <tr><td>{@code ratelimit.breaker.failures}</td><td>{@code 5}</td><td>consecutive Valkey failures that open the
 *       circuit breaker, if at least half of the last second's calls (at least twice this many) failed too: no calls,
 *       each rule's on-failure policy at once; {@code 0} disables it</td></tr>
 *   <tr><td>{@code ratelimit.breaker.open-for}</td><td>{@code 2s}</td><td>how long the breaker stays open before
 *       one probe call decides whether calls resume</td></tr>
 *   <tr><td>{@code ratelimit.deny-cache.enabled}</td><td>{@code true}</td><td>remember rejections locally until their
 *       retry-after: a client hammering a limit is answered without calling Valkey (not for rules with
 *       {@code count-rejected}, which must see every attempt, nor where the retry-after is only an upper
 *       bound: {@code concurrency} rules and requests reserved by {@code count-when} or
 *       {@code refund-when})</td></tr>
 *   <tr><td>{@code ratelimit.deny-cache.max-entries}</td><td>{@code 10000}</td><td>most rejections remembered</td></tr>
 *   <tr><td>{@code ratelimit.deny-cache.max-hold}</td><td>{@code 1s}</td><td>the longest a rejection is replayed,
 *       whatever its retry-after: units another instance gives back, or its reset, are seen within it</td></tr>
 *   <tr><td>{@code ratelimit.local.max-keys}</td><td>{@code 100000}</td><td>most keys the in-process limiter holds;
 *       past that the least recently used is forgotten</td></tr>
 *   <tr><td>{@code ratelimit.limit-provider.cache-ttl}</td><td>{@code 60s}</td><td>how long an answer of the
 *       application's {@link LimitProvider} is used before it is asked again</td></tr>
 *   <tr><td>{@code ratelimit.limit-provider.cache-size}</td><td>{@code 10000}</td><td>most answers kept</td></tr>
 *   <tr><td>{@code ratelimit.limit-provider.timeout}</td><td>{@code 50ms}</td><td>the longest a request waits for an
 *       answer; a slower, failing or invalid one leaves the configured limit</td></tr>
 *   <tr><td>{@code ratelimit.metrics.near-limit-ratio}</td><td>{@code 0.8}</td><td>the share of a quota used from
 *       which an allowed request is reported as near its limit</td></tr>
 *   <tr><td>{@code ratelimit.refresh}</td><td>{@code off}</td><td>how often the settings are read again (at least
 *       {@code 100ms}): rules, their limits, plans and policies, the headers and the trusted proxies apply to the
 *       requests that follow; a reading with any problem is refused whole and logged; the connection, key prefix,
 *       clock, breaker and cache sizes change only at a restart</td></tr>
 * </table>
 *
 * <h2>Rule settings, under {@code ratelimit.rule.<name>.}</h2>
 * <table>
 *   <caption>Rule settings</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code limit}</td><td>(required)</td><td>units per window (for {@code concurrency}: requests in
 *       progress at once); {@code limit} (or {@code burst}) × window in ms below 2^50; at most 10,000 for
 *       {@code sliding-log} and {@code concurrency}</td></tr>
 *   <tr><td>{@code window}</td><td>(required)</td><td>{@code 500ms}, {@code 30s}, {@code 15m}, {@code 1h},
 *       {@code 1d} or ISO-8601 ({@code PT15M}); for {@code fixed-window} also {@code calendar-day},
 *       {@code calendar-week} or {@code calendar-month} in {@code time-zone}; not for
 *       {@code concurrency}</td></tr>
 *   <tr><td>{@code time-zone}</td><td>{@code UTC}</td><td>a calendar window only: the IANA zone of its
 *       periods</td></tr>
 *   <tr><td>{@code algorithm}</td><td>{@code sliding-window-counter}</td><td>{@code fixed-window},
 *       {@code sliding-log}, {@code sliding-window-counter}, {@code token-bucket}, {@code gcra}, or
 *       {@code concurrency} (requests in progress, released after each response)</td></tr>
 *   <tr><td>{@code permit-timeout}</td><td>{@code 60s}</td><td>{@code concurrency} only: when a request's permit
 *       expires if it is never released (an instance that died mid-request)</td></tr>
 *   <tr><td>{@code burst}</td><td>{@code limit}</td><td>token-bucket and gcra only: units that may be taken at once</td></tr>
 *   <tr><td>{@code local-lease}</td><td>{@code 0} (off)</td><td>fixed-window, token-bucket and gcra, with Valkey:
 *       the most units an instance takes ahead per key, serving that key's next requests without a call</td></tr>
 *   <tr><td>{@code local-lease-time}</td><td>{@code 100ms}</td><td>how long a local lease serves before its unused
 *       units go back</td></tr>
 *   <tr><td>{@code scope}</td><td>{@code route}</td><td>{@code route}: the filter applies the rule to the
 *       requests its {@code match}, {@code exclude} and {@code methods} select; {@code method}: only the
 *       {@code @RateLimited} methods that name it do, never the filter. An annotation may name only a method rule,
 *       and a method rule takes no {@code match}, {@code exclude} or {@code methods}</td></tr>
 *   <tr><td>{@code match}</td><td>{@code /*}</td><td>comma-separated servlet URL patterns: {@code /exact},
 *       {@code /prefix/*}, {@code *.ext}, {@code /}; matched against the path the container dispatches to</td></tr>
 *   <tr><td>{@code exclude}</td><td>(none)</td><td>URL patterns the rule never applies to</td></tr>
 *   <tr><td>{@code methods}</td><td>(all)</td><td>comma-separated HTTP methods, e.g. {@code POST}; {@code GET}
 *       includes {@code HEAD}, which does its work ({@code HttpServlet.doHead} runs {@code doGet})</td></tr>
 *   <tr><td>{@code key}</td><td>{@code ip}</td><td>what is counted per: {@code ip}, {@code principal},
 *       {@code principal-or-ip}, {@code path}, {@code header:<name>}, {@code param:<name>}, {@code global},
 *       several joined by {@code +} ({@code ip+path}). A request lacking the value (no principal, no such
 *       header or parameter) is not counted by the rule</td></tr>
 *   <tr><td>{@code lowercase-key}</td><td>{@code false}</td><td>lower-case principal, header and parameter
 *       values first (user names differing only in case are one user)</td></tr>
 *   <tr><td>{@code cost}</td><td>{@code 1}</td><td>units each request takes</td></tr>
 *   <tr><td>{@code count-rejected}</td><td>{@code false}</td><td>rejected requests consume too; with
 *       {@code count-when} only if {@code 429} is among its statuses, with {@code refund-when} only if it is
 *       not</td></tr>
 *   <tr><td>{@code count-when}</td><td>(every request)</td><td>{@code status:} and statuses or classes
 *       ({@code status:401,403}, {@code status:4xx}): only responses with these statuses count; the units
 *       are taken before the application runs and given back after any other response</td></tr>
 *   <tr><td>{@code plan}</td><td>(none)</td><td>where the caller's plan comes from: {@code header:<name>}
 *       (believed from a trusted proxy only; from anyone else ignored, the rule's own limit applies),
 *       {@code role:<role>,<role>...} (the first the caller has) or {@code attribute:<name>}</td></tr>
 *   <tr><td>{@code plan.<plan>.limit}, {@code .window}, {@code .burst}</td><td>the rule's</td><td>the limit,
 *       window and burst of callers of that plan (a burst scales with the limit), at least the rule's
 *       {@code cost}; other callers get the rule's own</td></tr>
 *   <tr><td>{@code refund-when}</td><td>(never)</td><td>{@code status:} and statuses or classes
 *       ({@code status:5xx}): responses with these statuses are given back; not with {@code count-when}</td></tr>
 *   <tr><td>{@code on-failure}</td><td>{@code open}</td><td>when Valkey cannot be reached in time, or this rule's
 *       state for the request's key cannot be read: {@code open} allows, {@code closed} answers 503, {@code local}
 *       decides with the in-process limiter</td></tr>
 *   <tr><td>{@code local-limit}</td><td>{@code limit}</td><td>the limit the in-process limiter enforces per instance
 *       for {@code on-failure=local} (the burst shrinks in proportion), at least the rule's {@code cost}; the same
 *       for every caller of the rule, whatever its plan or limit from code</td></tr>
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
