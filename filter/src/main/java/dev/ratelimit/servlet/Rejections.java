package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Writes the responses the filter answers itself: 429 when a rule rejects, 503 when a
 * {@code closed} rule cannot reach Valkey. Both carry {@code Retry-After} in whole seconds,
 * rounded up, and an {@code application/problem+json} body (RFC 9457).
 */
final class Rejections {

    private Rejections() {
    }

    static void tooManyRequests(HttpServletResponse response, String rule, Duration retryAfter) throws IOException {
        long seconds = Math.max(1, RateLimitHeaders.seconds(retryAfter));
        write(response, 429, seconds, "Too Many Requests",
                "The rate limit '" + rule + "' is exhausted; retry in " + seconds + " s.", rule);
    }

    static void unavailable(HttpServletResponse response, String rule, Duration retryAfter) throws IOException {
        long seconds = Math.max(1, RateLimitHeaders.seconds(retryAfter));
        write(response, 503, seconds, "Service Unavailable",
                "The rate limit '" + rule + "' cannot be checked right now; retry in " + seconds + " s.", rule);
    }

    private static void write(HttpServletResponse response, int status, long retryAfterSeconds, String title,
                              String detail, String rule) throws IOException {
        response.setStatus(status);
        response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        response.setHeader("Cache-Control", "no-store");
        response.setContentType("application/problem+json");
        response.setCharacterEncoding("UTF-8");
        // Every interpolated value is a rule name ([A-Za-z0-9._-]) or a number: no JSON escaping needed.
        byte[] body = ("{\"type\":\"about:blank\",\"title\":\"" + title + "\",\"status\":" + status
                + ",\"detail\":\"" + detail + "\",\"rule\":\"" + rule + "\",\"retryAfter\":" + retryAfterSeconds + "}")
                .getBytes(StandardCharsets.UTF_8);
        // A known length and no flush: the container sends headers and body in one write, not chunked.
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
