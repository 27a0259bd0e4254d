package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import java.io.IOException;

/**
 * Keeps the rate-limit fields off 3xx responses ({@code ratelimit.headers.on-redirects=false}).
 *
 * <p>The filter sets the fields before the application answers, so the status is not known
 * then. The application sets it later through the response it is handed: this wrapper sees
 * {@code setStatus}, every {@code sendRedirect} (Servlet 6.1's with a status too, on a container
 * that has them) and {@code sendError}, and takes the fields off when the status becomes a 3xx,
 * putting them back if it changes again before the response is committed; a {@code reset()},
 * which drops every header and makes the status 200 again, puts them back as well.
 *
 * <p>Asynchronous processing sees this wrapper when the application starts it with the pair it
 * was handed ({@code startAsync(request, response)}, as Jersey and Spring do) or answers through
 * the response it was handed. A servlet that calls {@code startAsync()} with no arguments and
 * answers through {@link jakarta.servlet.AsyncContext#getResponse()} is handed the container's
 * own response (the Servlet specification's rule for that form), and a 3xx it sets there keeps
 * the fields. The filter does not start async processing with the wrapped pair on the
 * application's behalf: that would change what the application sees
 * ({@code hasOriginalRequestAndResponse()}, where a path-less {@code dispatch()} goes after a
 * forward), and a rate limiter must not change how an application behaves.
 */
final class RedirectGuard {

    private RedirectGuard() {
    }

    /** The response, taking the fields off while its status is a 3xx. */
    private static final class Response extends HttpServletResponseWrapper {
        /** The request's account, whose fields grow as later layers decide rules. */
        private final RequestAccount account;
        /** Whether the fields were taken off for a 3xx and are not back. */
        private volatile boolean withheld;

        Response(HttpServletResponse response, RequestAccount account) {
            super(response);
            this.account = account;
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
        public void sendError(int status) throws IOException {
            // Before the error: the container answers it at once, with or without an error page.
            follow(status);
            super.sendError(status);
        }

        @Override
        public void sendError(int status, String message) throws IOException {
            follow(status);
            super.sendError(status, message);
        }

        /**
         * Servlet 6.1's redirection with a status (compiled against 6.0, so no {@code @Override}:
         * on a 6.1 container this overrides the wrapper's own, which would pass it straight on).
         */
        public void sendRedirect(String location, int status) throws IOException {
            sendRedirect(location, status, true);
        }

        /** Servlet 6.1's redirection that may keep the buffer: a 302. */
        public void sendRedirect(String location, boolean clearBuffer) throws IOException {
            sendRedirect(location, HttpServletResponse.SC_FOUND, clearBuffer);
        }

        /** Servlet 6.1's redirection with a status and a choice of buffer. */
        public void sendRedirect(String location, int status, boolean clearBuffer) throws IOException {
            follow(status);
            Servlet61.sendRedirect((HttpServletResponse) getResponse(), location, status, clearBuffer);
        }

        @Override
        public void reset() {
            super.reset();
            // The container dropped every header, ours too, and the status is 200 again.
            HttpServletResponse response = (HttpServletResponse) getResponse();
            account.fields().forEach(response::setHeader);
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
                account.fields().keySet().forEach(name -> response.setHeader(name, null));
                withheld = true;
            } else if (!RateLimitHeaders.isRedirection(status) && withheld) {
                account.fields().forEach(response::setHeader);
                withheld = false;
            }
        }
    }

    /**
     * The response to pass down the chain: wrapped when the fields stay off 3xx responses and the
     * request has fields, or may have some later (an annotated method's); else as it is.
     *
     * @param response the response, with the fields already set
     * @param account  the request's account
     * @param later    whether a later layer may decide rules for the request
     * @return the response to pass on
     */
    static HttpServletResponse around(HttpServletResponse response, RequestAccount account, boolean later) {
        if (account.fieldsOnRedirects() || account.fields().isEmpty() && !later) {
            return response;
        }
        return new Response(response, account);
    }
}
