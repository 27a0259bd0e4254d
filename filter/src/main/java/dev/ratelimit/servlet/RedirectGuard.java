package dev.ratelimit.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import java.io.IOException;
import java.util.Map;

/**
 * Keeps the rate-limit fields off 3xx responses ({@code ratelimit.headers.on-redirects=false}).
 *
 * <p>The filter sets the fields before the application answers, so the status is not known
 * then. The application sets it later through the response it is handed: this wrapper sees
 * {@code setStatus} and {@code sendRedirect} and takes the fields off when the status becomes
 * a 3xx, putting them back if it changes again before the response is committed.
 *
 * <p>An asynchronous application calling {@code startAsync()} would be handed the container's
 * own response, not this wrapper (the Servlet specification's rule for the no-argument form),
 * and its {@code setStatus(302)} would go unseen. The request wrapper therefore starts async
 * processing with the wrapped pair, so {@link AsyncContext#getResponse()} is this wrapper too.
 * What that changes for the application, and only while the fields stay off 3xx responses:
 * {@link AsyncContext#hasOriginalRequestAndResponse()} is false, and a {@code dispatch()}
 * without a path goes to the request's URI as the filter saw it, so after a forward it goes to
 * the forwarding URI, not the forward's target (a dispatch with a path is unchanged).
 */
final class RedirectGuard {

    private RedirectGuard() {
    }

    /** The request, handing out the guarded response to async processing too. */
    private static final class Request extends HttpServletRequestWrapper {
        private final ServletResponse response;

        Request(HttpServletRequest request, ServletResponse response) {
            super(request);
            this.response = response;
        }

        @Override
        public AsyncContext startAsync() {
            return super.startAsync(this, response);
        }
    }

    /** The response, taking the fields off while its status is a 3xx. */
    private static final class Response extends HttpServletResponseWrapper {
        private final Map<String, String> fields;
        /** Whether the fields were taken off for a 3xx and are not back. */
        private volatile boolean withheld;

        Response(HttpServletResponse response, Map<String, String> fields) {
            super(response);
            this.fields = fields;
        }

        @Override
        public void setStatus(int status) {
            super.setStatus(status);
            follow(status);
        }

        @Override
        public void sendRedirect(String location) throws IOException {
            // Before the redirect: it commits the response.
            follow(HttpServletResponse.SC_FOUND);
            super.sendRedirect(location);
        }

        @Override
        public void reset() {
            super.reset();
            // The container dropped every header; a later dispatch puts the fields back.
            withheld = false;
        }

        /** Takes the fields off for a 3xx, or puts them back when a 3xx was replaced. */
        private void follow(int status) {
            if (isCommitted()) {
                return;
            }
            HttpServletResponse response = (HttpServletResponse) getResponse();
            if (RateLimitHeaders.isRedirection(status) && !withheld) {
                // A null value removes the field (Servlet 6; Jetty and Tomcat both do).
                fields.keySet().forEach(name -> response.setHeader(name, null));
                withheld = true;
            } else if (!RateLimitHeaders.isRedirection(status) && withheld) {
                fields.forEach(response::setHeader);
                withheld = false;
            }
        }
    }

    /**
     * What the chain is given.
     *
     * @param request  the request, wrapped or not
     * @param response the response, wrapped or not
     */
    record Pair(HttpServletRequest request, HttpServletResponse response) {
    }

    /**
     * The pair to pass down the chain: wrapped when the fields stay off 3xx responses and there
     * are fields, else the request and response as they are.
     *
     * @param request     the request
     * @param response    the response, with the fields already set
     * @param fields      the fields set
     * @param onRedirects whether the fields go on 3xx responses too
     * @return the pair
     */
    static Pair around(HttpServletRequest request, HttpServletResponse response, Map<String, String> fields,
                       boolean onRedirects) {
        if (onRedirects || fields.isEmpty()) {
            return new Pair(request, response);
        }
        Response guarded = new Response(response, fields);
        return new Pair(new Request(request, guarded), guarded);
    }
}
