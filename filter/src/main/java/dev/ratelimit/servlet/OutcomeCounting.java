package dev.ratelimit.servlet;

import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.config.OutcomeCondition;
import dev.ratelimit.config.RuleSettings;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Rules that count by the response ({@code count-when}, {@code refund-when}) and in-flight
 * limits ({@code algorithm=concurrency}): the request's units were reserved before the
 * application ran, so that concurrent requests cannot all pass the check before any is
 * counted; once the response is complete (an async one, or one the application threw on,
 * included) they are kept, or given back when its status says the request must not count, and
 * leases are released.
 */
final class OutcomeCounting {

    /** The status a request gets when the application throws before answering: the container answers 500. */
    private static final int THROWN = HttpServletResponse.SC_INTERNAL_SERVER_ERROR;

    private OutcomeCounting() {
    }

    /** Whether any of a request's rules counts by outcome or holds a lease for the request's duration. */
    static boolean applies(List<RuleSettings> rules) {
        for (RuleSettings rule : rules) {
            if (rule.outcome().isPresent() || rule.costFrom().isPresent() || rule.rule().algorithm().isConcurrency()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs the chain, then settles the filter's part by the response's status: at once, or when
     * an async request completes. A CDI call's refusal that the application let through to here
     * uncaught is answered as the filter's own refusal (429 or 503, not a 500), while the response
     * is not committed, and what the request's other layers took goes back.
     *
     * @param now     the reading of the settings the request is decided by
     * @param account the request's account
     * @param part    what the filter decided for the request
     */
    static void run(RunningFilter.Active now, HttpServletRequest request, HttpServletResponse response,
                    FilterChain chain, RequestAccount account, RequestAccount.Part part)
            throws IOException, ServletException {
        Reservation reservation = part.reservation();
        List<RuleSettings> rules = part.rules();
        boolean later = false;
        boolean thrown = true;
        try {
            chain.doFilter(request, response);
            thrown = false;
            if (request.isAsyncStarted() && !part.isEmpty()) {
                Completion completion = event -> settle(reservation, rules, completedStatus(event),
                        ReportedCosts.of(rules, event.getSuppliedRequest(), event.getSuppliedResponse()));
                // With the request and response supplied: an event carries them only then (the
                // Servlet spec; Open Liberty keeps to it, where Jetty and Tomcat supply their own).
                request.getAsyncContext().addListener(completion, request, response);
                later = true;
            }
        } catch (IOException | ServletException | RuntimeException | Error e) {
            RequestAccount.Part refused = account.thrownRefusal(e);
            if (refused == null || response.isCommitted()) {
                throw e;
            }
            account.answer(now, refused);
            response.reset();
            Rejections.refuse(response, refused.problem(), account);
            thrown = false;
        } finally {
            if (!later && !part.isEmpty()) {
                settle(reservation, rules, outcome(response, thrown), ReportedCosts.of(rules, request, response));
            }
        }
    }

    /**
     * The status a request is settled by. What a committed response said is its outcome: an
     * exception after the commit (typically a write failing because the client hung up) does not
     * undo the work the response reported, so it neither refunds a 200 as a 500 nor drops a
     * counted 401. Only an exception before anything was committed makes the request a 500,
     * which is what the container then answers.
     */
    private static int outcome(HttpServletResponse response, boolean thrown) {
        return thrown && !response.isCommitted() ? THROWN : response.getStatus();
    }

    /**
     * Keeps the units, or gives back those of the rules whose condition says this status does
     * not count; either way releases the leases of concurrency rules (see {@link Reservation}).
     */
    static void settle(Reservation reservation, List<RuleSettings> rules, int status) {
        settle(reservation, rules, status, rule -> -1);
    }

    /**
     * {@link #settle(Reservation, List, int)}, the units kept by each rule's reported cost where
     * it has a {@code cost-from} (the difference given back or charged; see
     * {@link Reservation#commit(java.util.function.ToLongFunction)}).
     *
     * @param reported each rule's cost as the response reported it; -1 for none
     */
    static void settle(Reservation reservation, List<RuleSettings> rules, int status, ToLongFunction<Rule> reported) {
        Predicate<Rule> givesBack = rule -> condition(rules, rule).map(c -> c.givesBack(status)).orElse(false);
        if (rules.stream().anyMatch(rule -> rule.costFrom().isPresent())) {
            // One settlement: a rule whose condition gives this status back costs nothing, the
            // others what their response reported (or what they reserved).
            reservation.commit(rule -> givesBack.test(rule) ? 0 : costFrom(rules, rule).isPresent()
                    ? reported.applyAsLong(rule) : -1);
            return;
        }
        for (RuleSettings rule : rules) {
            if (givesBack.test(rule.rule())) {
                reservation.cancel(givesBack);
                return;
            }
        }
        reservation.commit();
    }

    private static Optional<dev.ratelimit.config.CostSource> costFrom(List<RuleSettings> rules, Rule rule) {
        for (RuleSettings settings : rules) {
            if (settings.rule().name().equals(rule.name())) {
                return settings.costFrom();
            }
        }
        return Optional.empty();
    }

    private static Optional<OutcomeCondition> condition(List<RuleSettings> rules, Rule rule) {
        for (RuleSettings settings : rules) {
            if (settings.rule().name().equals(rule.name())) {
                return settings.outcome();
            }
        }
        return Optional.empty();
    }

    /** The status an async request completed with; an event without an HTTP response counts as thrown. */
    private static int completedStatus(AsyncEvent event) {
        return event.getSuppliedResponse() instanceof HttpServletResponse response ? response.getStatus() : THROWN;
    }

    /**
     * Settles an async request once its response is complete (after a timeout or an error too).
     * An interface, its one instance a lambda, rather than a class: a Jakarta EE server (WildFly)
     * makes an optional EE component of every concrete {@link AsyncListener} class it finds in a
     * deployment, so that {@code AsyncContext.createListener} could inject it, and warns on each
     * deploy about one it cannot construct without arguments. A lambda's class is made at run
     * time, so there is none in the JAR to find.
     */
    @FunctionalInterface
    private interface Completion extends AsyncListener {

        /** Settles the reservation by the status of the complete response. */
        @Override
        void onComplete(AsyncEvent event);

        @Override
        default void onTimeout(AsyncEvent event) {
            // onComplete follows, with the status the timeout left.
        }

        @Override
        default void onError(AsyncEvent event) {
            // onComplete follows.
        }

        @Override
        default void onStartAsync(AsyncEvent event) {
            // A new async cycle (startAsync again): stay registered for its completion, with
            // the same request and response supplied.
            event.getAsyncContext().addListener(this, event.getSuppliedRequest(), event.getSuppliedResponse());
        }
    }
}
