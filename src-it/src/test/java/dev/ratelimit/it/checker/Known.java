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
    DENY_CACHE_IGNORES_COST(3, Workload.Target.LOCAL_RESILIENT),

    /**
     * The deny cache remembers a rejection met while acquiring for its retry-after even when the
     * room comes back earlier because reservations of the same rule and key are cancelled: the
     * next callers are turned away with room free (a lockout). The cache already leaves out
     * rejections met while reserving, for this reason, but not an acquiring call's rejection
     * caused by others' reservations. Only through the API: in the filter a rule that gives
     * back (count-when, refund-when) is always reserved. Avoided: with the deny cache on, as in
     * the filter, a rule either gives back (its requests are reserved, and only its units are
     * given back) or never does.
     */
    DENY_CACHE_OUTLIVES_REFUND(21, Workload.Target.LOCAL_RESILIENT),

    /**
     * Cancelling a reservation in which a shadow rule that counts rejections rejected gives back
     * the attempt it recorded, as if those were units taken; but recording it did not add what
     * it gives back: a sliding window counter fills its window only up to the limit, and a
     * sliding log keeps only its newest {@code limit} entries, so the attempt pushed out entries
     * of allowed requests. Giving the attempt back then gives back allowed units, and the rule
     * admits more than its limit in one window. Avoided: such a reservation is committed instead
     * of cancelled.
     */
    SHADOW_COUNTED_ATTEMPT_REFUND(7, Workload.Target.LOCAL),

    /**
     * A token bucket or GCRA refund of units taken before the rule was edited computes what is
     * still owed at the old rule's refill rate: after an edit to a faster rate the bucket has
     * refilled them already, and the refund then gives back units taken after the edit (more
     * than the bucket would hold had the reservation never been made). Avoided: a reservation
     * holding a bucket rule edited since is committed instead of cancelled.
     */
    BUCKET_REFUND_ACROSS_EDIT(13, Workload.Target.LOCAL),

    /**
     * A refund of units reserved before the rule's state for the key was reset (or deleted)
     * gives back units taken since: a sliding window counter whose new state is in the window
     * charged lowers the new count (seen; by the code, a fixed window does the same, and a
     * bucket still owing the units), though {@code Reservation.Refund} promises that a state
     * reset since has nothing to give back. The in-process limiter's leases are named by the
     * millisecond and a sequence that restarts after a reset, so settling a reservation from
     * before the reset releases a lease taken after it in the same millisecond: more leases are
     * then granted than the limit (seen). Avoided: a reservation older than a reset (or a
     * deletion) of one of its states is never settled.
     */
    REFUND_ACROSS_RESET(158, Workload.Target.LOCAL),

    /**
     * {@code ResilientRateLimiter.reset} forgets the key in the store and the fallback but not in
     * the deny cache: a rejection remembered before the reset still turns callers away, though
     * "its quota is full again". Only through the API: the filter never resets. Avoided: no
     * resets while the deny cache is on.
     */
    DENY_CACHE_OUTLIVES_RESET(10, Workload.Target.LOCAL_RESILIENT),

    /**
     * A shadow rule whose local policy's rule is not shadow ({@code FailurePolicy.local} does not
     * check): when the store cannot decide, the fallback decides the request's local rules by
     * the local rules' own flags, so that local rule's rejection keeps the others from counting,
     * while the request, combined by the shared rules' flags, passes. The other rules' local
     * limits then let everything through. The filter builds a local rule shadow exactly when its
     * rule is. Found on Valkey behind the resilient layer; not pinned to a seed, since runs with
     * stalls depend on timing. Avoided: a local rule is shadow exactly when its rule is.
     */
    LOCAL_RULE_SHADOW_MISMATCH(0, Workload.Target.VALKEY_RESILIENT);

    private final long seed;
    private final Workload.Target target;

    Known(long seed, Workload.Target target) {
        this.seed = seed;
        this.target = target;
    }

    /**
     * A seed whose workload, with this defect alone not avoided, shows it (in-process, so the
     * run is the same every time); 0 when none is pinned.
     *
     * @return the seed
     */
    long seed() {
        return seed;
    }

    /**
     * Where that seed shows it.
     *
     * @return the target
     */
    Workload.Target target() {
        return target;
    }

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
