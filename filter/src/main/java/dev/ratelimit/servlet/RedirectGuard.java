package dev.ratelimit.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletRequest;
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
 */
final class RedirectGuard {

    private RedirectGuard() {
    }

    /** The request, handing out the guarded response to async processing too. */
    static final class Request extends HttpServletRequestWrapper {
        private final ServletResponse response;

        Request(HttpServletRequest request, Response response) {
            super(request);
            this.response = response;
        }

        @Override
        public AsyncContext startAsync() {
            return super.startAsync(this, response);
        }
    }

    /** The response, taking the fields off while its status is a 3xx. */
    static final class Response extends HttpServletResponseWrapper {
        private final Map<String, String> fields;
        /** Whether the fields were taken off for a 3xx and are not back. */
        private boolean withheld;

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
     * The pair to pass down the chain.
     *
     * @param request  the request
     * @param response the response, with the fields already set
     * @param fields   the fields set
     * @return the wrapped request, whose {@link Request#response} is the wrapped response
     */
    static Request wrap(HttpServletRequest request, HttpServletResponse response, Map<String, String> fields) {
        return new Request(request, new Response(response, fields));
    }

    /**
     * The response a wrapped request hands out.
     *
     * @param request from {@link #wrap}
     * @return its response
     */
    static HttpServletResponse responseOf(Request request) {
        return (HttpServletResponse) request.response;
    }
}
