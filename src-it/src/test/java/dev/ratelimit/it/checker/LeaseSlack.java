package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.util.HashMap;
import java.util.Map;

/**
 * What local leases allow the invariants beyond a history of admissions (README, "Local
 * leases"). Safety is unchanged: every unit admitted was taken first, and a bucket's lease
 * charges the refill while it lasts, so the lower bounds hold exactly. What the history cannot
 * see are the units taken ahead and not yet admitted:
 * <ul>
 *   <li>liveness: each instance may hold, per rule and key, leases of at most {@code size}
 *       units together (the serving one and one taken ahead) and their two margins, which the
 *       store counts and no request has used; a lease whose
 *       give-back or whose take's reply was lost (a fault) stays counted until its window ends or
 *       the bucket refills, so each fault may leave one more;</li>
 *   <li>the promise of {@code r} within {@code t}: a decision counts the units its own live
 *       lease holds, not those another instance holds and may admit, nor those of an ended
 *       lease (its own or another's) that go back to the store meanwhile, with what of a
 *       bucket's margin has not refilled: at most {@code size + margin} per instance.</li>
 *   <li>safety after a wipe: leases taken from the wiped state still serve, up to {@code size}
 *       per instance, until they end.</li>
 * </ul>
 */
final class LeaseSlack {

    private final Map<String, Workload.LocalLease> leases = new HashMap<>();
    private int instances = 1;
    private int faults;

    /** Reads the run's leases from its start event's options ({@code localLeases}, {@code instances}). */
    void start(Map<String, Object> options) {
        leases.clear();
        faults = 0;
        instances = ((Number) options.getOrDefault("instances", 1)).intValue();
        if (options.get("localLeases") instanceof Map<?, ?> all) {
            all.forEach((rule, lease) -> {
                Map<?, ?> values = (Map<?, ?>) lease;
                leases.put((String) rule, new Workload.LocalLease(((Number) values.get("size")).longValue(),
                        ((Number) values.get("ms")).longValue()));
            });
        }
    }

    /** A fault happened: one more lease per instance and key may stay counted. */
    void fault() {
        faults++;
    }

    /** Units the store may count beyond the history's for the rule: held in leases, never admitted. */
    long withheld(Rule rule) {
        Workload.LocalLease lease = leaseOf(rule);
        return lease == null ? 0 : instances * (lease.size() + 2 * lease.margin(rule)) * (1L + faults);
    }

    /**
     * Units that may be admitted beyond what a decision said remains: other instances' leases,
     * and ended leases' units going back to the store (one per instance at a time).
     */
    long othersHold(Rule rule) {
        Workload.LocalLease lease = leaseOf(rule);
        return lease == null ? 0 : instances * (lease.size() + lease.margin(rule));
    }

    /**
     * Units that may be admitted beyond the limit after the state was wiped (a reset, a
     * restart, a planted value): leases taken from the wiped state serve on, each instance's up
     * to {@code size} more, until their time ends (README, "Local leases").
     */
    long afterWipe(Rule rule, long wipedAt, long t) {
        Workload.LocalLease lease = leaseOf(rule);
        return lease == null || wipedAt == Long.MIN_VALUE || t - wipedAt >= lease.millis() ? 0 : instances * lease.size();
    }

    private Workload.LocalLease leaseOf(Rule rule) {
        Algorithm algorithm = rule.algorithm();
        boolean leases = algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.TOKEN_BUCKET
                || algorithm == Algorithm.GCRA;
        return leases && !rule.countRejected() && !rule.shadow() ? this.leases.get(rule.name()) : null;
    }
}
