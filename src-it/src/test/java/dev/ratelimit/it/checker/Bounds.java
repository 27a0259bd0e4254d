package dev.ratelimit.it.checker;

import dev.ratelimit.Rule;

/**
 * Each algorithm's definition, as three questions about a ledger at a decision (see
 * {@link Invariants} for why each is sound). Integers throughout, as the scripts compute: a
 * bucket counts in ticks (one unit = window ticks, limit ticks refilled per ms), the sliding
 * window counter multiplies its estimate by the window.
 */
final class Bounds {

    /**
     * A sliding window counter reads each count up to this many limits (the debt a charge after
     * the work may leave; see {@code sliding-window-counter.lua}).
     */
    private static final long DEBT = dev.ratelimit.internal.Charges.DEBT_BUCKETS;

    private Bounds() {
    }

    /** A broken promise: which, why, and the client-time interval that shows it. */
    record Finding(String invariant, String message, long from, long to) {
    }

    /**
     * Safety: may {@code cost} more units be allowed at {@code t} on top of what the ledger
     * certainly counts?
     *
     * @param slack units the rule may admit beyond its limit or burst (other instances' leases
     *              after a wipe), 0 otherwise
     * @return the breach, or null
     */
    static Finding safety(Ledger ledger, long t, long cost, long slack) {
        Rule rule = ledger.current();
        // Units other instances' leases may admit on top after a wipe (LeaseSlack#afterWipe).
        long limit = rule.limit() + slack;
        long window = rule.window().toMillis();
        switch (rule.algorithm()) {
            case FIXED_WINDOW -> {
                long[] fixed = Calendars.window(rule, t);
                long start = fixed[0];
                long counted = ledger.lbSum(start, t);
                if (counted + cost > limit) {
                    return new Finding("fixed-window: units in one aligned window (or calendar period) <= limit",
                            "allowed " + cost + " at " + t + " with " + counted + " already counted in the window ["
                                    + start + ", " + fixed[1] + "): " + (counted + cost) + " > limit " + limit,
                            start, t);
                }
            }
            case SLIDING_LOG -> {
                long counted = ledger.lbSum(t - window + 1, t);
                if (counted + cost > limit) {
                    return new Finding("sliding-log: units in any interval of one window <= limit",
                            "allowed " + cost + " at " + t + " with " + counted + " already counted in (" + (t - window)
                                    + ", " + t + "]: " + (counted + cost) + " > limit " + limit, t - window + 1, t);
                }
            }
            case SLIDING_WINDOW_COUNTER -> {
                long start = t - Math.floorMod(t, window);
                long current = Math.min(DEBT * limit, ledger.lbSum(start, t));
                long previous = Math.min(DEBT * limit, ledger.lbSum(start - window, start - 1));
                if (!estimateAdmits(current, previous, t - start, window, limit, cost)) {
                    return new Finding("sliding-window-counter: cur + prev × (window − elapsed) / window <= limit",
                            "allowed " + cost + " at " + t + ", " + (t - start) + " ms into the window starting " + start
                                    + ", with " + current + " counted in it and " + previous + " in the one before: "
                                    + (current + cost) + " + " + previous + " × " + (window - (t - start)) + "/" + window
                                    + " > limit " + limit, start - window, t);
                }
            }
            case TOKEN_BUCKET, GCRA -> {
                long[] debt = ledger.lbDebt(t);
                long capacity = (rule.burst() + slack) * window;
                if (debt[0] + cost * window > capacity) {
                    long from = Math.min(debt[1], t);
                    long units = ledger.lbSum(from, t) + cost;
                    return new Finding(rule.algorithm().id() + ": units in any [a, b] <= burst + limit × (b − a) / window",
                            "allowed " + cost + " at " + t + ": " + units + " units counted in [" + from + ", " + t
                                    + "], more than burst " + (rule.burst() + slack) + " + " + rule.limit() + " × "
                                    + (t - from) + " / " + window + " = "
                                    + String.format("%.3f", rule.burst() + slack + (double) rule.limit() * (t - from)
                                    / window), from, t);
                }
            }
            case CONCURRENCY -> {
                long held = ledger.lbHeld(t, t);
                if (held + cost > limit) {
                    long since = ledger.lbHeldSince(t, t);
                    return new Finding("concurrency: leases held at any instant <= limit",
                            "granted " + cost + " lease(s) at " + t + " while " + held + " taken since " + since
                                    + " were held (neither released nor timed out): " + (held + cost) + " > limit "
                                    + limit, since, t);
                }
            }
        }
        return null;
    }

    /**
     * Liveness: was a rejection of {@code cost} at {@code t} a lockout, the rule having room
     * even by everything the store may count? Not asked before the ledger's liveness start.
     *
     * @return the lockout, or null
     */
    static Finding liveness(Ledger ledger, long t, long cost, long op) {
        if (t < ledger.livenessFrom()) {
            return null;
        }
        Rule rule = ledger.current();
        long limit = rule.limit();
        long window = rule.window().toMillis();
        String invariant = rule.algorithm().id() + ": not rejected while the history shows room";
        switch (rule.algorithm()) {
            case FIXED_WINDOW -> {
                long[] fixed = Calendars.window(rule, t);
                long start = fixed[0];
                long counted = ledger.ubSum(start, t);
                if (counted + cost <= limit) {
                    return new Finding(invariant, "rejected " + cost + " at " + t + " with at most " + counted
                            + " counted in the window [" + start + ", " + fixed[1] + "), limit " + limit,
                            start, t);
                }
            }
            case SLIDING_LOG -> {
                long counted = ledger.ubSum(t - window + 1, t);
                if (counted + cost <= limit) {
                    return new Finding(invariant, "rejected " + cost + " at " + t + " with at most " + counted
                            + " counted in (" + (t - window) + ", " + t + "], limit " + limit, t - window + 1, t);
                }
            }
            case SLIDING_WINDOW_COUNTER -> {
                long start = t - Math.floorMod(t, window);
                long current = Math.min(DEBT * limit, ledger.ubSum(start, t));
                long previous = Math.min(DEBT * limit, ledger.ubSum(start - window, start - 1));
                if (estimateAdmits(current, previous, t - start, window, limit, cost)) {
                    return new Finding(invariant, "rejected " + cost + " at " + t + ", " + (t - start)
                            + " ms into the window starting " + start + ", with at most " + current + " counted in it and "
                            + previous + " in the one before: the estimate admits it, limit " + limit, start - window, t);
                }
            }
            case TOKEN_BUCKET, GCRA -> {
                long[] debt = ledger.ubDebt(t);
                long capacity = rule.burst() * window;
                if (debt[0] + cost * window <= capacity) {
                    return new Finding(invariant, "rejected " + cost + " at " + t + " with a debt of at most "
                            + debt[0] + " ticks (" + window + " per unit): " + (debt[0] + cost * window) + " <= burst "
                            + rule.burst() + " × " + window, Math.min(debt[1], t) - 2 * capacity / rule.limit(), t);
                }
            }
            case CONCURRENCY -> {
                long held = ledger.ubHeld(t, op);
                if (held + cost <= limit) {
                    return new Finding("concurrency: not rejected while fewer than limit − cost leases are held",
                            "rejected " + cost + " lease(s) at " + t + " while at most " + held + " were held, limit "
                                    + limit, t - window, t);
                }
            }
        }
        return null;
    }

    /**
     * The effective window (draft-11's {@code t}) a rejection announces never ends after its
     * retry-after: the request needs more than remaining, so more quota must come first.
     * Judged on the decision alone (the contract tests check the window's own value).
     *
     * @return the inconsistency, or null
     */
    static Finding effectiveWindow(Rule rule, dev.ratelimit.Decision decision, long t) {
        long window = decision.effectiveWindow().toMillis();
        // A rule that delays admits the retry for a slot up to its max delay later.
        long held = rule.maxDelay().toMillis();
        if (!decision.allowed() && decision.retryAfter().toMillis() + held < window) {
            return new Finding(rule.algorithm().id() + ": a rejection's retry-after never precedes its effective window",
                    "retry-after " + decision.retryAfter().toMillis() + " ms < effective window " + window + " ms: "
                            + decision, t, t + window);
        }
        return null;
    }

    /**
     * Retry-after never early: would the same {@code cost}, {@code retryAfter} ms after
     * {@code t}, with no other traffic, still be rejected by what the ledger certainly counts?
     *
     * @return the early retry-after, or null
     */
    static Finding early(Ledger ledger, long t, long cost, long retryAfter) {
        return early(ledger, t, cost, retryAfter, 0);
    }

    /**
     * The same, with {@code slack} units of the lower bound that the store may no longer hold
     * (units a lease taken from a wiped state served, counted as the store's: LeaseSlack#afterWipe).
     */
    static Finding early(Ledger ledger, long t, long asked, long retryAfter, long slack) {
        long cost = Math.max(0, asked - slack);
        Rule rule = ledger.current();
        long limit = rule.limit();
        long window = rule.window().toMillis();
        long at = t + retryAfter;
        String invariant = rule.algorithm().id() + ": a retry-after is never earlier than the rule allows again";
        String head = "rejected " + asked + " at " + t + " with retry-after " + retryAfter + " ms, but at " + at + " ";
        switch (rule.algorithm()) {
            case FIXED_WINDOW -> {
                long[] fixed = Calendars.window(rule, t);
                long start = fixed[0];
                long counted = ledger.lbSum(start, t);
                if (at < fixed[1] && counted + cost > limit) {
                    return new Finding(invariant, head + "the window [" + start + ", " + fixed[1]
                            + ") still holds " + counted + " counted, limit " + limit, start, at);
                }
            }
            case SLIDING_LOG -> {
                long counted = ledger.lbSum(at - window + 1, t);
                if (counted + cost > limit) {
                    return new Finding(invariant, head + counted + " counted units are still within the window, limit "
                            + limit, at - window + 1, at);
                }
            }
            case SLIDING_WINDOW_COUNTER -> {
                long start = at - Math.floorMod(at, window);
                long current = Math.min(DEBT * limit, ledger.lbSum(start, t));
                long previous = Math.min(DEBT * limit, ledger.lbSum(start - window, Math.min(start - 1, t)));
                if (!estimateAdmits(current, previous, at - start, window, limit, cost)) {
                    return new Finding(invariant, head + "the estimate is still " + current + " + " + previous + " × "
                            + (window - (at - start)) + "/" + window + ", limit " + limit, start - window, at);
                }
            }
            case TOKEN_BUCKET, GCRA -> {
                long[] debt = ledger.lbDebt(t);
                long then = Math.max(0, debt[0] - retryAfter * limit);
                if (then + cost * window > rule.burst() * window) {
                    return new Finding(invariant, head + "the debt is still " + then + " ticks (" + window
                            + " per unit), burst " + rule.burst(), Math.min(debt[1], t), at);
                }
            }
            case CONCURRENCY -> {
                long held = ledger.lbHeld(t, at);
                if (held + cost > limit) {
                    return new Finding(invariant, head + held + " lease(s) certainly held now still have not timed out, "
                            + "limit " + limit, ledger.lbHeldSince(t, at), at);
                }
            }
        }
        return null;
    }

    /** The sliding window counter's test, times the window: (cur + cost) × w + prev × (w − e) <= limit × w. */
    private static boolean estimateAdmits(long current, long previous, long elapsed, long window, long limit, long cost) {
        return (current + cost) * window + previous * (window - elapsed) <= limit * window;
    }
}
