package dev.ratelimit.servlet;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * How the filter handles each dispatch of a request: the table of contents of a request's path.
 * The first dispatch opens the request's account ({@link RequestAccount}), which later layers (an
 * annotated resource method, a CDI method it calls) share, and goes through these steps, each
 * a named method or type:
 * <ol>
 *   <li><b>match</b>: the route rules that apply, each with its key and plan
 *       ({@link RequestKeys#match}, over {@link dev.ratelimit.config.RequestMatcher});</li>
 *   <li><b>claims</b>: the application's limits applied, and the rules another layer of the
 *       request decided already left out ({@link RequestAccount#decide});</li>
 *   <li><b>decide</b>, in {@link dev.ratelimit.resilient.ResilientRateLimiter}'s one path,
 *       {@code DecisionPath.decide}: the claims checked once; a rejection the deny cache holds
 *       <b>replayed</b>; the <b>store asked</b>
 *       ({@link dev.ratelimit.valkey.ValkeyRateLimiter}: {@code Acquirer} takes from local leases,
 *       {@code LeaseTaker}, then one function call per slot group, {@code LimiterCalls} through
 *       {@code GuardedCalls}, in the format {@code ScriptFormat} owns and {@code dispatcher.lua}
 *       documents); a rule it cannot decide given to its <b>policy</b> ({@code FailurePolicies});
 *       the decision <b>reported</b> ({@code DecisionEvents}); its rejections <b>remembered</b>
 *       ({@code DenyCache}); parts decided apart <b>settled</b> ({@code Settlement});</li>
 *   <li><b>hold</b> a request admitted for a slot to come ({@code max-delay}) until it, without a
 *       thread ({@link DelayedRequests}), then go on at its dispatch (an annotated resource
 *       method's rules hold it the same way, through the response passed on,
 *       {@link HoldableResponse});</li>
 *   <li><b>refuse</b> (429, or 503 of a {@code closed} rule) through {@link Rejections};</li>
 *   <li>or <b>write the fields</b> ({@link RateLimitHeaders}) and run the application
 *       ({@link OutcomeCounting#run}), then settle what was reserved by the response's status.</li>
 * </ol>
 * Every later dispatch of the same client request (a forward, an async dispatch, an error page)
 * only puts back the account's fields. One per filter.
 */
final class DispatchHandler {

    /**
     * Handles one dispatch of an HTTP request.
     *
     * @param now the reading of the settings this request is decided by, taken whole
     */
    void handle(RunningFilter.Active now, HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        RequestAccount account = RequestAccount.of(request, now.settings(), now.clock());
        if (!account.filterSees()) {
            RequestAccount.Part delayed = account.resumeDelayed();
            if (delayed != null) {
                // The dispatch at the slot of a request held for it: the application runs now.
                run(now, request, response, chain, account, delayed);
                return;
            }
            // One client request is decided once, whatever dispatches it goes through (REQUEST,
            // then FORWARD, ASYNC, ERROR...): later ones only put back the fields it was given.
            RateLimitHeaders.restore(response, account.fields(), account.fieldsOnRedirects());
            chain.doFilter(request, RedirectGuard.around(response, account, now.methods().any()));
            return;
        }
        List<RequestKeys.Matched> matched = now.keys().match(request, now.settings().rules());
        boolean mayDelay = delays(matched) && now.delayed().mayHold(request);
        RequestAccount.Part part;
        try {
            part = account.decide(now, matched, RequestAccount.Layer.FILTER, false, mayDelay);
            Duration delay = part.allowed() ? part.reservation().decisions().delay() : Duration.ZERO;
            if (!delay.isZero()) {
                // Admitted for a slot to come: held without a thread until it, then dispatched
                // again. Its fields go on now, so that a dispatch the filter does not see (not
                // mapped for ASYNC) still carries them.
                account.fields().forEach(response::setHeader);
                account.holdDelayed(part);
                now.delayed().hold(request, response, delay, part.reservation(), account);
                return;
            }
        } finally {
            if (mayDelay) {
                now.delayed().decided();
            }
        }
        if (!part.allowed()) {
            Rejections.refuse(response, part.problem(), account);
            return;
        }
        run(now, request, response, chain, account, part);
    }

    /** Whether a rule of the request may hold it for a slot to come. */
    private static boolean delays(List<RequestKeys.Matched> matched) {
        for (RequestKeys.Matched rule : matched) {
            if (!rule.claim().rule().maxDelay().isZero()) {
                return true;
            }
        }
        return false;
    }

    /** Writes the fields and runs the application, settling what the part reserved by its response. */
    private void run(RunningFilter.Active now, HttpServletRequest request, HttpServletResponse response,
                     FilterChain chain, RequestAccount account, RequestAccount.Part part)
            throws IOException, ServletException {
        RunningFilter.MethodRules methods = now.methods();
        // An annotated method's fields come later: the response is guarded for them too.
        HttpServletResponse passed = RedirectGuard.around(response, account, methods.any());
        HttpServletRequest passedOn = request;
        if (methods.delay()) {
            // An annotated resource method may hold the request for its slot: what Jakarta REST
            // writes for the method it stopped must not reach the client, and what the layers
            // read of the body must be there again at the slot.
            HoldableResponse holdable = new HoldableResponse(passed);
            RecordedBody body = new RecordedBody();
            account.mayBeHeldLater(request, response, holdable, body);
            passed = holdable;
            passedOn = body.recording(request);
        }
        account.holdResponse(passed, response);
        account.fields().forEach(passed::setHeader);
        OutcomeCounting.run(now, passedOn, passed, chain, account, part);
    }
}
