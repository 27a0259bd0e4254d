package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Writes the responses the filter answers itself: 429 when a rule rejects, 503 when a
 * {@code closed} rule cannot reach Valkey. Both carry {@code Retry-After} in whole seconds,
 * rounded up, and an {@code application/problem+json} body (RFC 9457) of the problem types of
 * draft-ietf-httpapi-ratelimit-headers (§"Problem Types"), see {@link ProblemDetails}.
 */
final class Rejections {

    /** The draft's problem type for a request over one or more quotas. */
    static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";
    /** The draft's problem type for a request refused while capacity is reduced. */
    static final String REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

    private Rejections() {
    }

    /**
     * Answers 429.
     *
     * @param violated   every enforcing rule that rejected the request
     * @param rule       the one of them the client must wait for longest
     * @param retryAfter how long that is
     */
    static void tooManyRequests(HttpServletResponse response, List<String> violated, String rule, Duration retryAfter)
            throws IOException {
        long seconds = Math.max(1, RateLimitHeaders.seconds(retryAfter));
        write(response, seconds, new ProblemDetails(QUOTA_EXCEEDED, "Too Many Requests", 429,
                "The rate limit '" + rule + "' is exhausted; retry in " + seconds + " s.", violated, rule, seconds));
    }

    /**
     * Answers 503.
     *
     * @param refused    every rule whose {@code closed} policy refused the request, at least one
     * @param retryAfter the {@code ratelimit.failure-retry-after}
     */
    static void unavailable(HttpServletResponse response, List<String> refused, Duration retryAfter) throws IOException {
        long seconds = Math.max(1, RateLimitHeaders.seconds(retryAfter));
        String rule = refused.get(0);
        write(response, seconds, new ProblemDetails(REDUCED_CAPACITY, "Service Unavailable", 503,
                "The rate limit '" + rule + "' cannot be checked right now; retry in " + seconds + " s.", refused, rule,
                seconds));
    }

    private static void write(HttpServletResponse response, long retryAfterSeconds, ProblemDetails problem)
            throws IOException {
        response.setStatus(problem.status());
        response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        response.setHeader("Cache-Control", "no-store");
        response.setContentType("application/problem+json");
        response.setCharacterEncoding("UTF-8");
        byte[] body = problem.toJson().getBytes(StandardCharsets.UTF_8);
        // A known length and no flush: the container sends headers and body in one write, not chunked.
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
