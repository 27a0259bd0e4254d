package dev.ratelimit.it.checker;

import dev.ratelimit.servlet.LimitProvider;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The application's limits: an answer per key, which the checker changes during a run, and
 * every question asked with its answer, which is what the filter's cache then holds.
 */
final class HttpProvider implements LimitProvider {
    /** An answer that throws. */
    static final long THROWS = -1;
    /** No answer: the configured limit. */
    static final long NONE = 0;

    /** Key to answer: a limit, {@link #NONE} or {@link #THROWS}. */
    final Map<String, Long> answers = new ConcurrentHashMap<>();
    /** Every question, "rule algorithm windowMs calendar key", to the answer given (NONE for none or a throw). */
    final Map<String, Long> asked = new ConcurrentHashMap<>();

    @Override
    public java.util.OptionalLong limit(dev.ratelimit.Rule rule, String key, java.security.Principal principal) {
        long answer = answers.getOrDefault(key, NONE);
        asked.put(question(rule, key), answer == THROWS ? NONE : answer);
        if (answer == THROWS) {
            throw new IllegalStateException("the application's limits are unavailable");
        }
        return answer == NONE ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(answer);
    }

    /**
     * How the filter's cache names an answer: per rule, algorithm, window and key, a calendar
     * window with its zone (a week in one zone and a week in another are two windows of the same
     * length, and an answer for one is not asked for the other).
     */
    static String question(dev.ratelimit.Rule rule, String key) {
        return rule.name() + ' ' + rule.algorithm().id() + ' ' + rule.window().toMillis() + ' '
                + (rule.calendar() == null ? "rolling" : Calendars.text(rule.calendar())) + ' ' + key;
    }
}
