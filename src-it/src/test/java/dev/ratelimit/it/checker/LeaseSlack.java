package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What local leases allow the invariants beyond a history of admissions (README, "Local
 * leases"). Safety is unchanged: every unit admitted was taken first, and a bucket's lease
 * charges the refill while it lasts, so the lower bounds hold exactly. What the history cannot
 * see are the units taken ahead and not yet admitted:
 * <ul>
 *   <li>liveness: an instance refused by the store first gives back its own leases of the key
 *       (README, "Local leases"), so what the store counts beyond the history at a rejection is
 *       the other instances': each holds, per rule and key, leases of at most {@code size} units
 *       together (the serving one and one taken ahead) and their two margins, and may have as
 *       much again on its way back to the store; an operator's peek ({@code ratelimit
 *       inspect}, from a limiter of its own) gives back nothing, so for it every instance is
 *       another. A lease whose give-back or whose take's reply
 *       was lost (a fault) stays counted until the bucket without it would have refilled it:
 *       each fault may leave one per instance, which goes as the history's bucket loses refill
 *       (a fixed window's, when its window ends);</li>
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
    /** When faults happened (client ms). */
    private final List<Long> faults = new ArrayList<>();

    /** Reads the run's leases from its start event's options ({@code localLeases}, {@code instances}). */
    void start(Map<String, Object> options) {
        leases.clear();
        faults.clear();
        instances = ((Number) options.getOrDefault("instances", 1)).intValue();
        if (options.get("localLeases") instanceof Map<?, ?> all) {
            all.forEach((rule, lease) -> {
                Map<?, ?> values = (Map<?, ?>) lease;
                leases.put((String) rule, new Workload.LocalLease(((Number) values.get("size")).longValue(),
                        ((Number) values.get("ms")).longValue()));
            });
        }
    }

    /** A fault happened at {@code at}: one more lease per instance and key may stay counted. */
    void fault(long at) {
        faults.add(at);
    }

    /**
     * Units the store may count beyond the history's for the rule at a rejection at {@code t}:
     * held in the other instances' leases, never admitted; and leases faults left counted, less
     * what the history's bucket refilled away since.
     *
     * @param ledger   the key's ledger, whose upper bound tells what refilled since a fault
     * @param outsider whether the operator's limiter rejected, which holds no leases of its own
     */
    long withheld(Rule rule, Ledger ledger, long t, boolean outsider) {
        Workload.LocalLease lease = leaseOf(rule);
        if (lease == null) {
            return 0;
        }
        long held = lease.size() + 2 * lease.margin(rule);
        long window = rule.window().toMillis();
        long withheld = others(outsider) * 2 * held;
        for (long at : faults) {
            if (at > t) {
                continue;
            }
            long gone = rule.algorithm() == Algorithm.FIXED_WINDOW
                    ? (Calendars.window(rule, at)[1] <= t ? held : 0)
                    : ledger.ubLost(at, t) / window;
            withheld += Math.max(0, instances * held - gone);
        }
        return withheld;
    }

    /** The most {@link #withheld} can be, faults never refilled: asked first, as it is cheap. */
    long mostWithheld(Rule rule, boolean outsider) {
        Workload.LocalLease lease = leaseOf(rule);
        if (lease == null) {
            return 0;
        }
        long held = lease.size() + 2 * lease.margin(rule);
        return others(outsider) * 2 * held + (long) faults.size() * instances * held;
    }

    /** The least {@link #withheld} can be: no fault's lease left. */
    long leastWithheld(Rule rule, boolean outsider) {
        Workload.LocalLease lease = leaseOf(rule);
        return lease == null ? 0 : others(outsider) * 2 * (lease.size() + 2 * lease.margin(rule));
    }

    /** The instances whose leases a rejection cannot see: all but the one rejecting, or all for the operator's. */
    private long others(boolean outsider) {
        return outsider ? instances : instances - 1;
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
     * to {@code size} more, until their time ends (README, "Local leases"); and the units they
     * served, which the history counts as the store's though the store never held them, weigh
     * on until the rule's state could no longer hold them ({@link Ledger#horizon}).
     */
    long afterWipe(Rule rule, long wipedAt, long t) {
        Workload.LocalLease lease = leaseOf(rule);
        return lease == null || wipedAt == Long.MIN_VALUE || t - wipedAt >= lease.millis() + Ledger.horizon(rule) ? 0
                : instances * lease.size();
    }

    /** Whether instances lease the rule's units ahead. */
    boolean leases(Rule rule) {
        return leaseOf(rule) != null;
    }

    private Workload.LocalLease leaseOf(Rule rule) {
        Algorithm algorithm = rule.algorithm();
        boolean leases = algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.TOKEN_BUCKET
                || algorithm == Algorithm.GCRA;
        return leases && !rule.countRejected() && !rule.shadow() ? this.leases.get(rule.name()) : null;
    }
}
