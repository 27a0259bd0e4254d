package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * How the filter handles each dispatch of a request: the first decides it against its rules and
 * writes its headers (or answers 429/503 through {@link Rejections}); every later dispatch of the
 * same client request (a forward, an async dispatch, an error page) only puts back the headers it
 * was given. One per filter.
 */
final class Dispatches {

    // The filter's own logger name: operators configure the filter's logging by its class.
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());
    /** The request attribute that marks a request as decided; its value is the headers it got. */
    private static final String DECIDED = RateLimitFilter.class.getName() + ".decided";

    /** Whether a failure of the limiter itself was logged: once per filter, not once per request. */
    private final AtomicBoolean unexpectedLogged = new AtomicBoolean();

    /**
     * Handles one dispatch of an HTTP request.
     *
     * @param now the reading of the settings this request is decided by, taken whole
     */
    void handle(RunningFilter.Active now, HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        // One client request is decided once, whatever dispatches it goes through (REQUEST, then
        // FORWARD, ASYNC, ERROR...): later dispatches only put back the headers it was given.
        if (request.getAttribute(DECIDED) instanceof Map<?, ?> fields) {
            @SuppressWarnings("unchecked")
            Map<String, String> headers = (Map<String, String>) fields;
            boolean onRedirects = now.settings().headersOnRedirects();
            RateLimitHeaders.restore(response, headers, onRedirects);
            RedirectGuard.Pair passed = RedirectGuard.around(request, response, headers, onRedirects);
            chain.doFilter(passed.request(), passed.response());
            return;
        }
        request.setAttribute(DECIDED, Map.of());
        RequestKeys.Matched matched = now.keys().match(request, now.settings().rules());
        if (matched.claims().isEmpty()) {
            chain.doFilter(request, response);
            return;
        }
        // An annotated method of the same request (RateLimits) skips these: one decision per rule.
        request.setAttribute(RateLimits.DECIDED_RULES,
                matched.rules().stream().map(r -> r.rule().name()).collect(Collectors.toUnmodifiableSet()));
        boolean byOutcome = OutcomeCounting.applies(matched.rules());
        Reservation reservation = decide(now, request, response, matched, byOutcome);
        if (reservation == null) {
            return;
        }
        @SuppressWarnings("unchecked")
        Map<String, String> headers = (Map<String, String>) request.getAttribute(DECIDED);
        RedirectGuard.Pair passed = RedirectGuard.around(request, response, headers,
                now.settings().headersOnRedirects());
        if (byOutcome) {
            OutcomeCounting.run(passed.request(), passed.response(), chain, reservation, matched.rules());
        } else {
            chain.doFilter(passed.request(), passed.response());
        }
    }

    /**
     * Decides the request and writes its headers.
     *
     * @param byOutcome whether some rule counts by the response's status: its units are then
     *                  reserved, to be kept or given back after the response
     * @return null when the request was answered here (429 or 503), else what it took
     */
    private Reservation decide(RunningFilter.Active now, HttpServletRequest request, HttpServletResponse response,
                               RequestKeys.Matched matched, boolean byOutcome) throws IOException {
        FilterSettings settings = now.settings();
        Reservation reservation;
        try {
            reservation = byOutcome ? now.limiter().reserveAll(matched.claims())
                    : Reservation.kept(now.limiter().acquireAll(matched.claims()));
        } catch (RuntimeException | Error e) {
            // The limiter applies every policy itself; this is a bug, and still no 500 for it.
            if (unexpectedLogged.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.ERROR, "RateLimitFilter could not decide a request; letting requests "
                        + "through that fail so (logged once)", e);
            }
            return Reservation.kept(Decisions.of(List.of(), List.of()));
        }
        Decisions decisions = reservation.decisions();
        if (decisions.unavailable()) {
            Rejections.unavailable(response, decisions, settings.failureRetryAfter());
            return null;
        }
        List<RateLimitHeaders.Entry> entries = entries(matched, decisions);
        request.setAttribute(DECIDED, RateLimitHeaders.write(response, settings.headers(), entries));
        if (decisions.allowed()) {
            return reservation;
        }
        Rejections.tooManyRequests(response, entries, decisions.retryAfter());
        return null;
    }

    /**
     * The decided rules of a request as its headers announce them: a plan's rule as the caller's
     * limit, a local decision with the limit it enforces; a rule not decided is left out.
     */
    static List<RateLimitHeaders.Entry> entries(RequestKeys.Matched matched, Decisions decisions) {
        List<RateLimitHeaders.Entry> entries = new ArrayList<>(matched.rules().size());
        for (int i = 0; i < matched.rules().size(); i++) {
            RuleSettings rule = matched.rules().get(i);
            Decision decision = decisions.decisions().get(i);
            switch (decision.basis()) {
                // The rule of the caller's plan: the headers describe the caller's own limit.
                case SHARED -> entries.add(new RateLimitHeaders.Entry(matched.claims().get(i).rule(), decision));
                // A local decision is announced with the limit it enforces, not the shared one.
                case LOCAL -> entries.add(new RateLimitHeaders.Entry(rule.localRule(), decision));
                default -> {
                    // Not decided: nothing to announce.
                }
            }
        }
        return entries;
    }
}
