package dev.ratelimit.config;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.time.Duration;

/**
 * A rule (or a plan) its settings describe that {@link Rule} refused, said against the property
 * that broke it. Every setting is checked on its own before the rule is made; what is left to
 * the rule's own checks is the size of {@code max(limit, burst)}, alone and times the window,
 * which its message names by the rule alone.
 */
final class RuleBounds {

    private static final String TOO_LARGE = "is too large: ";

    private RuleBounds() {
    }

    /**
     * The problem, in the settings' words.
     *
     * @param values         the values read (for the properties' texts as written)
     * @param p              the prefix of the limit and burst, {@code ratelimit.rule.api.} or a plan's
     * @param windowProperty the property of the window the rule was made with
     * @param algorithm      the rule's algorithm
     * @param limit          its limit
     * @param burst          its burst
     * @param refused        what the rule said
     * @return {@code ratelimit.rule.api.limit='...' is too large with ...window='1m': ...}; the rule's
     *         words under {@code p*} for anything else
     */
    static String problem(SettingsValues values, String p, String windowProperty, Algorithm algorithm, long limit,
                          long burst, IllegalArgumentException refused) {
        String message = refused.getMessage();
        int at = message.indexOf(TOO_LARGE);
        if (at < 0) {
            return p + "*: " + message;
        }
        // The larger of the two broke it: the burst when it is set above the limit.
        String property = p + (burst > limit && values.raw(p + "burst").isPresent() ? "burst" : "limit");
        String value = values.raw(property).orElse(Long.toString(Math.max(limit, burst)));
        // Too large even over a millisecond: the number alone, whatever the window.
        String with = fitsOneMillisecond(algorithm, limit, burst) ? " with " + windowProperty + "='"
                + values.raw(windowProperty).orElse("") + "'" : "";
        return property + "='" + value + "' is too large" + with + ": " + message.substring(at + TOO_LARGE.length());
    }

    private static boolean fitsOneMillisecond(Algorithm algorithm, long limit, long burst) {
        try {
            Rule.builder("bounds", algorithm).limit(limit).window(Duration.ofMillis(1)).burst(burst).build();
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
