package dev.ratelimit.servlet;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.List;

/**
 * How the filter handles each dispatch of a request. The first opens the request's account
 * ({@link RequestAccount}), which later layers (an annotated resource method, a CDI method it
 * calls) share, and goes through these steps:
 * <ol>
 *   <li>match the route rules and build their claims ({@link RequestKeys});</li>
 *   <li>decide them in one call, the deny cache, failure policies, leases and metrics included
 *       ({@link RequestAccount#decide});</li>
 *   <li>refuse the request (429, or 503 of a {@code closed} rule) through {@link Rejections};</li>
 *   <li>or write the account's fields and run the application ({@link OutcomeCounting#run}),
 *       then settle what was reserved by the response's status.</li>
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
            // One client request is decided once, whatever dispatches it goes through (REQUEST,
            // then FORWARD, ASYNC, ERROR...): later ones only put back the fields it was given.
            RateLimitHeaders.restore(response, account.fields(), account.fieldsOnRedirects());
            chain.doFilter(request, RedirectGuard.around(response, account));
            return;
        }
        List<RequestKeys.Matched> matched = now.keys().match(request, now.settings().rules());
        RequestAccount.Part part = account.decide(now, matched, RequestAccount.Layer.FILTER, false);
        if (!part.allowed()) {
            Rejections.refuse(response, part.problem(), account);
            return;
        }
        HttpServletResponse passed = RedirectGuard.around(response, account);
        account.holdResponse(passed);
        account.fields().forEach(passed::setHeader);
        OutcomeCounting.run(now, request, passed, chain, account, part);
    }
}
