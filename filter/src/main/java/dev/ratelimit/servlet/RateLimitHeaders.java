package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.config.HeaderMode;
import jakarta.servlet.http.HttpServletResponse;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * {@code q} is the quota, {@code w} its window in seconds, {@code r} the units remaining (never
 * more than {@code q}) and {@code t} the effective window: the seconds, rounded up, within which
 * no more than {@code r} units can be taken, that is until more quota is made available
 * ({@link Decision#effectiveWindow()}; with the quota full, {@code w}).
 *
 * <p>For the token bucket and GCRA the quota is the burst, the units a client may take at once,
 * and {@code w} the time the rule needs to refill all of them ({@code burst × window / limit}):
 * {@code q=150;w=90} for 100 per minute with a burst of 150, the same rate as the rule. With the
 * burst equal to the limit that is the rule's own limit and window.
 *
 * <p>A concurrency rule (requests in progress at once) has {@code qu="concurrent-requests"} and
 * no {@code w}: {@code "jobs";q=20;qu="concurrent-requests"}; its {@code r} is the free slots
 * and its {@code t} the time until the next lease held would time out, an upper bound (no
 * {@code t} while none is held).
 *
 * <p>{@code t} is not the time until the quota is <em>fully</em> restored: a client that waits
 * {@code t} seconds finds more quota, not necessarily all of it ({@link Decision#resetAfter()}).
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

    /**
     * Sets the fields on the response.
     *
     * @return the fields set, name to value, so that a later dispatch of the same request can
     *         put back any that an error page or a reset dropped
     */
    static Map<String, String> write(HttpServletResponse response, HeaderMode mode, List<Entry> entries) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (entries.isEmpty()) {
            return fields;
        }
        if (mode.draft()) {
            StringJoiner policy = new StringJoiner(", ");
            StringJoiner state = new StringJoiner(", ");
            for (Entry entry : entries) {
                // Rule names are limited to [A-Za-z0-9._-]: nothing to escape in a String item.
                String name = '"' + entry.rule().name() + '"';
                policy.add(entry.rule().algorithm().isConcurrency()
                        // Units in progress, not per window: the draft's unit for it, and no w.
                        ? name + ";q=" + entry.rule().capacity() + ";qu=\"concurrent-requests\""
                        : name + ";q=" + entry.rule().capacity() + ";w=" + seconds(quotaWindow(entry.rule())));
                Duration window = effectiveWindow(entry.decision());
                // No t where no more quota will come (a concurrency rule holding no lease).
                state.add(name + ";r=" + entry.decision().remaining() + (window.isZero() ? "" : ";t=" + seconds(window)));
            }
            fields.put("RateLimit-Policy", policy.toString());
            fields.put("RateLimit", state.toString());
        }
        if (mode.legacy()) {
            Entry tightest = entries.get(0);
            for (Entry entry : entries) {
                if (entry.decision().remaining() < tightest.decision().remaining()) {
                    tightest = entry;
                }
            }
            fields.put("X-RateLimit-Limit", Long.toString(tightest.rule().capacity()));
            fields.put("X-RateLimit-Remaining", Long.toString(tightest.decision().remaining()));
            fields.put("X-RateLimit-Reset", Long.toString(seconds(tightest.decision().resetAfter())));
        }
        fields.forEach(response::setHeader);
        return fields;
    }

    /**
     * Puts back the fields of an earlier dispatch that the response no longer has.
     *
     * @param response the response
     * @param fields   what {@link #write} set
     */
    static void restore(HttpServletResponse response, Map<String, String> fields) {
        if (response.isCommitted()) {
            return;
        }
        fields.forEach((name, value) -> {
            if (!response.containsHeader(name)) {
                response.setHeader(name, value);
            }
        });
    }

    /** The time in which the rule restores its whole quota ({@link Rule#capacity()}) at its rate. */
    static Duration quotaWindow(Rule rule) {
        return rule.quotaWindow();
    }

    /**
     * The {@code t} of a decided rule: the time within which no more than its remaining units
     * can be taken (draft-11 §4.1.2), zero when no more quota will come.
     */
    static Duration effectiveWindow(Decision decision) {
        return decision.effectiveWindow();
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
