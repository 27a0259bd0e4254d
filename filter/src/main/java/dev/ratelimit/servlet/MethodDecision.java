package dev.ratelimit.servlet;

import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.config.RuleSettings;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How {@link RateLimits} decided one call of an annotated method: its rate-limit header fields,
 * and for a refused call the status, {@code Retry-After} and {@code application/problem+json}
 * body the filter would answer (429 over a limit, 503 when a {@code closed} rule cannot reach
 * Valkey). An allowed call's units are settled by {@link #settle} once its outcome is known.
 */
public final class MethodDecision {

    private static final MethodDecision NONE = new MethodDecision(Reservation.kept(Decisions.of(List.of(), List.of())),
            List.of(), Map.of(), false, null);

    private final Reservation reservation;
    private final List<RuleSettings> rules;
    private final Map<String, String> headers;
    private final boolean headersOnRedirects;
    /** The refusal's problem, or null for an allowed call. */
    private final ProblemDetails problem;

    MethodDecision(Reservation reservation, List<RuleSettings> rules, Map<String, String> headers,
                   boolean headersOnRedirects, ProblemDetails problem) {
        this.reservation = reservation;
        this.rules = List.copyOf(rules);
        this.headers = Map.copyOf(headers);
        this.headersOnRedirects = headersOnRedirects;
        this.problem = problem;
    }

    /** A call no rule decided: allowed, no fields. */
    static MethodDecision none() {
        return NONE;
    }

    /**
     * Whether the call may go on.
     *
     * @return false when a rule rejected it or a {@code closed} rule could not be checked
     */
    public boolean allowed() {
        return problem == null;
    }

    /**
     * The names of the rules decided, in the order of the settings.
     *
     * @return the names; empty when none was
     */
    public List<String> rules() {
        return rules.stream().map(r -> r.rule().name()).toList();
    }

    /**
     * The rate-limit header fields for a response of this status, as {@code ratelimit.headers}
     * asks: none on a 3xx unless {@code ratelimit.headers.on-redirects}.
     *
     * @param status the response's status
     * @return name to value, in order
     */
    public Map<String, String> headers(int status) {
        return !headersOnRedirects && RateLimitHeaders.isRedirection(status) ? Map.of() : headers;
    }

    /**
     * The refusal's status: 429, or 503 when a {@code closed} rule could not be checked.
     *
     * @return the status, or empty for an allowed call
     */
    public Optional<Integer> status() {
        return problem == null ? Optional.empty() : Optional.of(problem.status());
    }

    /**
     * The refusal's {@code Retry-After}, in whole seconds (at least 1).
     *
     * @return the seconds, or 0 for an allowed call
     */
    public long retryAfterSeconds() {
        return problem == null ? 0 : problem.retryAfter();
    }

    /**
     * The refusal's {@code application/problem+json} body, as the filter writes it.
     *
     * @return the JSON, or empty for an allowed call
     */
    public Optional<String> problem() {
        return Optional.ofNullable(problem).map(ProblemDetails::toJson);
    }

    /**
     * Settles the call by its outcome as an HTTP status: kept, or given back where a rule's
     * {@code count-when} or {@code refund-when} says this status does not count; leases of
     * {@code concurrency} rules are released. Once only; later calls do nothing.
     *
     * @param status the response's status (a call that threw: 500)
     */
    public void settle(int status) {
        OutcomeCounting.settle(reservation, rules, status);
    }

    /**
     * Keeps the call's units: it counts (a CDI method that returned, or threw an exception not
     * listed as not counting). Releases its leases.
     */
    public void keep() {
        reservation.commit();
    }

    /**
     * Gives back every unit the call took (a CDI method that threw an exception listed as not
     * counting) and releases its leases.
     */
    public void giveBack() {
        reservation.cancel();
    }
}
