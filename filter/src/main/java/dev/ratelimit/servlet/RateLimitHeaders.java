package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.config.HeaderMode;
import jakarta.servlet.http.HttpServletResponse;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rate-limit header fields of a response, in the versions the settings choose
 * ({@link HeaderMode}), each written by its own {@link HeaderVersion}: {@link Draft11Fields},
 * {@link Draft03Fields}, {@link LegacyFields}.
 *
 * <p>For the token bucket and GCRA the quota is the burst, the units a client may take at once,
 * and its window the time the rule needs to refill all of them ({@code burst × window / limit}):
 * {@code q=150;w=90} for 100 per minute with a burst of 150, the same rate as the rule. With the
 * burst equal to the limit that is the rule's own limit and window.
 *
 * <p>A concurrency rule's remaining units are its free slots, and its effective window the time
 * until the next lease held would time out, an upper bound (none while no lease is held).
 *
 * <p>The reset ({@code t}, {@code RateLimit-Reset}, {@code X-RateLimit-Reset}) is the effective
 * window ({@link Decision#effectiveWindow()}): the seconds, rounded up, within which no more than
 * the remaining units can be taken, that is until more quota is made available; with the quota
 * full, the rule's window. It is not the time until the quota is <em>fully</em> restored
 * ({@link Decision#resetAfter()}): a client that waits it finds more quota, not necessarily all.
 */
final class RateLimitHeaders {

    private RateLimitHeaders() {
    }

    /**
     * One decided rule of a request.
     *
     * @param rule        the rule announced
     * @param decision    its decision
     * @param quotaWindow the rule's {@link Rule#quotaWindow(long)} on the filter's clock: the
     *                    {@code w} of the policy field, a calendar period's length of the moment
     * @param quotaUnit   the policy's {@code qu}; null for requests, the default
     */
    record Entry(Rule rule, Decision decision, Duration quotaWindow, String quotaUnit) {

        /** An entry of a rule counting requests. */
        Entry(Rule rule, Decision decision, Duration quotaWindow) {
            this(rule, decision, quotaWindow, null);
        }

        /** An entry whose quota window is the rule's on this machine's clock. */
        Entry(Rule rule, Decision decision) {
            this(rule, decision, rule.quotaWindow());
        }
    }

    /**
     * The versions a mode sends, in order. A new version of the draft is one {@link HeaderMode}
     * value and one {@link HeaderVersion}: the switch has no default, so the compiler asks for it.
     *
     * @param mode the setting
     * @return the writers
     */
    static List<HeaderVersion> versions(HeaderMode mode) {
        return switch (mode) {
            case DRAFT -> List.of(Draft11Fields.INSTANCE);
            case DRAFT_03 -> List.of(Draft03Fields.INSTANCE);
            case LEGACY -> List.of(LegacyFields.INSTANCE);
            case BOTH -> List.of(Draft11Fields.INSTANCE, LegacyFields.INSTANCE);
            case NONE -> List.of();
        };
    }

    /**
     * The fields of a request's decided rules.
     *
     * @param mode    which versions to send
     * @param entries the decided rules
     * @return name to value, in the order set; empty when no rule was decided
     */
    static Map<String, String> fields(HeaderMode mode, List<Entry> entries) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (!entries.isEmpty()) {
            for (HeaderVersion version : versions(mode)) {
                version.write(entries, fields);
            }
        }
        return fields;
    }

    /**
     * Sets the fields on the response.
     *
     * @return the fields set, name to value, so that a later dispatch of the same request can
     *         put back any that an error page or a reset dropped
     */
    static Map<String, String> write(HttpServletResponse response, HeaderMode mode, List<Entry> entries) {
        Map<String, String> fields = fields(mode, entries);
        fields.forEach(response::setHeader);
        return fields;
    }

    /**
     * The rule a client runs into first: of the enforcing rules, the fewest units remaining, the
     * first of equals. A shadow rule limits no client, so it is the one only where every rule is
     * (its numbers would pace a client that nothing limits, or say a time the 429's
     * {@code Retry-After} does not).
     *
     * @param entries at least one
     * @return one of them
     */
    static Entry tightest(List<Entry> entries) {
        Entry tightest = entries.get(0);
        for (Entry entry : entries) {
            boolean enforcing = !entry.rule().shadow();
            boolean wasEnforcing = !tightest.rule().shadow();
            if (enforcing && !wasEnforcing
                    || enforcing == wasEnforcing && entry.decision().remaining() < tightest.decision().remaining()) {
                tightest = entry;
            }
        }
        return tightest;
    }

    /**
     * Puts back the fields of an earlier dispatch that the response no longer has.
     *
     * @param response    the response
     * @param fields      what {@link #write} set
     * @param onRedirects whether the fields go on a 3xx response too; when not and the response
     *                    is a redirection, nothing is put back
     */
    static void restore(HttpServletResponse response, Map<String, String> fields, boolean onRedirects) {
        if (response.isCommitted() || (!onRedirects && isRedirection(response.getStatus()))) {
            return;
        }
        fields.forEach((name, value) -> {
            if (!response.containsHeader(name)) {
                response.setHeader(name, value);
            }
        });
    }

    /**
     * Whether a status is a redirection (3xx), whose fields the draft warns about: a client may
     * wait for {@code t} before following {@code Location}.
     *
     * @param status an HTTP status
     * @return true for 300 to 399
     */
    static boolean isRedirection(int status) {
        return status >= 300 && status < 400;
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
