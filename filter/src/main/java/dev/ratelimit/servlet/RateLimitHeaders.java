package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.config.HeaderMode;
import jakarta.servlet.http.HttpServletResponse;

import java.time.Duration;
import java.util.List;
import java.util.StringJoiner;

/**
 * Writes the rate-limit header fields of a response.
 *
 * <p>The IETF fields of draft-ietf-httpapi-ratelimit-headers-11 are Structured Field Lists
 * with one item per rule, the rule's name as a String item:
 * <pre>
 * RateLimit-Policy: "api";q=100;w=60, "login";q=5;w=900
 * RateLimit: "api";r=57;t=12, "login";r=4;t=900
 * </pre>
 * {@code q} is the quota (the limit), {@code w} the window in seconds, {@code r} the units
 * remaining and {@code t} the seconds until the quota is fully restored, rounded up.
 *
 * <p>The legacy {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
 * {@code X-RateLimit-Reset} (seconds from now) describe one rule only, the one with the
 * fewest units remaining: that is the one a client runs into first.
 */
final class RateLimitHeaders {

    private RateLimitHeaders() {
    }

    /** One decided rule of a request. */
    record Entry(Rule rule, Decision decision) {
    }

    static void write(HttpServletResponse response, HeaderMode mode, List<Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        if (mode.draft()) {
            StringJoiner policy = new StringJoiner(", ");
            StringJoiner state = new StringJoiner(", ");
            for (Entry entry : entries) {
                // Rule names are limited to [A-Za-z0-9._-]: nothing to escape in a String item.
                String name = '"' + entry.rule().name() + '"';
                policy.add(name + ";q=" + entry.rule().limit() + ";w=" + seconds(entry.rule().window()));
                state.add(name + ";r=" + entry.decision().remaining() + ";t=" + seconds(entry.decision().resetAfter()));
            }
            response.setHeader("RateLimit-Policy", policy.toString());
            response.setHeader("RateLimit", state.toString());
        }
        if (mode.legacy()) {
            Entry tightest = entries.get(0);
            for (Entry entry : entries) {
                if (entry.decision().remaining() < tightest.decision().remaining()) {
                    tightest = entry;
                }
            }
            response.setHeader("X-RateLimit-Limit", Long.toString(tightest.rule().limit()));
            response.setHeader("X-RateLimit-Remaining", Long.toString(tightest.decision().remaining()));
            response.setHeader("X-RateLimit-Reset", Long.toString(seconds(tightest.decision().resetAfter())));
        }
    }

    /**
     * Whole seconds, rounded up: a client told to wait {@code n} seconds must never be early.
     *
     * @param duration any non-negative duration
     * @return the seconds
     */
    static long seconds(Duration duration) {
        long millis = duration.toMillis();
        return (millis + 999) / 1000;
    }
}
