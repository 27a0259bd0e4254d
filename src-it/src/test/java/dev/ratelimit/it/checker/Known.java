package dev.ratelimit.it.checker;

import java.util.EnumSet;
import java.util.Set;

/**
 * Defects the checker found in the limiter and that are still open. Each is avoided by the
 * workload, narrowly, so that the rest of the checker keeps guarding everything else; the
 * avoidance is lifted with {@code -Dchecker.expose=ALL} (or a comma-separated list of names),
 * and {@code CheckerTest#openDefectsAreStillFound} keeps a seed that shows each one, so that
 * fixing a defect fails that test until its entry here is deleted. An entry here is a bug
 * report, not a tolerance: the invariants themselves are never relaxed.
 */
enum Known {

    /**
     * The deny cache remembers a rejection per rule and key, not per cost: it turns away a
     * request of a smaller cost for which there is room (a lockout), and announces to a request
     * of a larger cost the retry-after of the smaller one (too early). Only through the API:
     * the filter asks each rule for one fixed cost. Avoided: with the deny cache on, each rule
     * is asked for one cost.
     */
    DENY_CACHE_IGNORES_COST,

    /**
     * A sliding window counter that counts rejections fills its window only up to the limit,
     * but cancelling a reservation in which it (as a shadow rule) rejected gives back the whole
     * cost: it gives back units other requests were allowed, and the window then admits more
     * than its limit. Avoided: no shadow sliding window counter counts rejections.
     */
    SHADOW_COUNTED_ATTEMPT_REFUND,

    /**
     * A token bucket or GCRA refund of units taken before the rule was edited computes what is
     * still owed at the old rule's refill rate: after an edit to a faster rate the bucket has
     * refilled them already, and the refund then gives back units taken after the edit (more
     * than the bucket would hold had the reservation never been made). Avoided: a reservation
     * holding a bucket rule edited since is committed instead of cancelled.
     */
    BUCKET_REFUND_ACROSS_EDIT;

    /**
     * The defects the workload avoids in this run.
     *
     * @return all but those named by {@code -Dchecker.expose}
     */
    static Set<Known> avoided() {
        String expose = System.getProperty("checker.expose", "");
        Set<Known> avoided = EnumSet.allOf(Known.class);
        if (expose.equals("ALL")) {
            return EnumSet.noneOf(Known.class);
        }
        for (String name : expose.split(",")) {
            if (!name.isBlank()) {
                avoided.remove(Known.valueOf(name.trim()));
            }
        }
        return avoided;
    }
}
