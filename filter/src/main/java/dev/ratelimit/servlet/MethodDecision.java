package dev.ratelimit.servlet;

import dev.ratelimit.Rule;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * How {@link RateLimits} decided one call of an annotated method, as a part of its request's
 * account: the request's rate-limit header fields (every rule decided for the request, by any
 * layer), and for a refused call the status, {@code Retry-After} and
 * {@code application/problem+json} body the filter would answer (429 over a limit, 503 when a
 * {@code closed} rule cannot reach Valkey). An allowed call's units are settled by
 * {@link #settle}, {@link #keep} or {@link #giveBack} once its outcome is known.
 */
public final class MethodDecision {

    private final RunningFilter.Active now;
    private final RequestAccount account;
    private final RequestAccount.Part part;

    private final boolean held;

    MethodDecision(RunningFilter.Active now, RequestAccount account, RequestAccount.Part part) {
        this(now, account, part, false);
    }

    MethodDecision(RunningFilter.Active now, RequestAccount account, RequestAccount.Part part, boolean held) {
        this.now = now;
        this.account = account;
        this.part = part;
        this.held = held;
    }

    /**
     * Whether the request is held for a slot to come ({@code max-delay}): the method must not run
     * now (a Jakarta REST filter stops it with any response, which the filter drops); the request
     * is dispatched again at its slot, and the method decided then runs by this decision.
     *
     * @return true for a request held; false for one that runs now or is refused
     */
    public boolean held() {
        return held;
    }

    /**
     * Whether the call may go on.
     *
     * @return false when a rule rejected it or a {@code closed} rule could not be checked
     */
    public boolean allowed() {
        return part.allowed();
    }

    /**
     * The names of the rules this call decided, in order.
     *
     * @return the names; empty when none was
     */
    public List<String> rules() {
        return part.rules().stream().map(r -> r.rule().name()).toList();
    }

    /**
     * The request's rate-limit header fields for a response of this status, as
     * {@code ratelimit.headers} asks: every rule decided for the request, by this call or another
     * layer; none on a 3xx unless {@code ratelimit.headers.on-redirects}.
     *
     * @param status the response's status
     * @return name to value, in order
     */
    public Map<String, String> headers(int status) {
        return !account.fieldsOnRedirects() && RateLimitHeaders.isRedirection(status) ? Map.of() : account.fields();
    }

    /**
     * The refusal's status: 429, or 503 when a {@code closed} rule could not be checked.
     *
     * @return the status, or empty for an allowed call
     */
    public Optional<Integer> status() {
        return Optional.ofNullable(part.problem()).map(ProblemDetails::status);
    }

    /**
     * The refusal's {@code Retry-After}, in whole seconds (at least 1).
     *
     * @return the seconds, or 0 for an allowed call
     */
    public long retryAfterSeconds() {
        return part.problem() == null ? 0 : part.problem().retryAfter();
    }

    /**
     * The refusal's {@code application/problem+json} body, as the filter writes it.
     *
     * @return the JSON, or empty for an allowed call
     */
    public Optional<String> problem() {
        return Optional.ofNullable(part.problem()).map(ProblemDetails::json);
    }

    /**
     * Says that this refusal is thrown to the application (a CDI call's): should it reach the
     * filter uncaught, the filter answers it as its own refusal.
     *
     * @param refusal the exception thrown
     */
    public void thrown(Throwable refusal) {
        if (!part.allowed()) {
            account.thrown(part, refusal);
        }
    }

    /**
     * Says that this refusal is the request's answer (a CDI call's refusal mapped to a response):
     * what the request's other layers took for it goes back, as when one rule of a call rejects.
     * Once; nothing for an allowed call.
     */
    public void answered() {
        if (!part.allowed() && now != null) {
            account.answer(now, part);
        }
    }

    /**
     * Settles the call by its outcome as an HTTP status: kept, or given back where a rule's
     * {@code count-when} or {@code refund-when} says this status does not count; leases of
     * {@code concurrency} rules are released. Once only; later calls do nothing.
     *
     * @param status the response's status (a call that threw: 500)
     */
    public void settle(int status) {
        OutcomeCounting.settle(part.reservation(), part.rules(), status);
    }

    /**
     * Settles the call as {@link #settle(int)} does, each rule with a {@code cost-from} kept at
     * the cost its response reported (the difference from its {@code cost} given back or charged;
     * see {@code Reservation.commit(ToLongFunction)}): a Jakarta REST resource method, once its
     * response is complete.
     *
     * @param status    the response's status
     * @param header    the response's headers, by name (null for none)
     * @param attribute the request's attributes, by name (null for none)
     * @param returned  what the method returned (its entity), or null
     */
    public void settle(int status, Function<String, Object> header, Function<String, Object> attribute,
                       Object returned) {
        OutcomeCounting.settle(part.reservation(), part.rules(), status,
                ReportedCosts.of(part.rules(), header, attribute, returned));
    }

    /**
     * Keeps the call's units: it counts (a CDI method that returned, or threw an exception not
     * listed as not counting). Releases its leases.
     */
    public void keep() {
        part.reservation().commit();
    }

    /**
     * Keeps the call's units, each rule with a {@code cost-from} at the cost the call reported
     * ({@code attribute:<name>} of the request, or {@code returned}: what the method returned, a
     * number or its text); the others as reserved. Releases its leases.
     *
     * @param attribute the request's attributes, by name (null for none)
     * @param returned  what the method returned (a {@code CompletionStage}'s value), or null
     */
    public void keep(Function<String, Object> attribute, Object returned) {
        ToLongFunction<Rule> costs = ReportedCosts.of(part.rules(), name -> null, attribute, returned);
        if (costs == ReportedCosts.NONE) {
            part.reservation().commit();
        } else {
            part.reservation().commit(costs);
        }
    }

    /**
     * Gives back every unit the call took (a CDI method that threw an exception listed as not
     * counting) and releases its leases.
     */
    public void giveBack() {
        part.reservation().cancel();
    }
}
