package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.List;

/**
 * The units one rule counted for one key in one domain (the shared store, or the in-process
 * fallback of a local policy), as the history shows them, and two readings of them:
 *
 * <ul>
 *   <li>the <b>lower bound</b> ({@code lb…}): units the store certainly still counts. Only
 *       {@link Unit.Kind#TAKEN} units, none that any refund may have given back (for a bucket a
 *       refund may be partial: dropping the whole reservation only lowers the bound), and only
 *       since the last edit or wipe of the state (the safety epoch). The safety invariants and
 *       the retry-after check use it: a limit is broken only if even this bound breaks it.</li>
 *   <li>the <b>upper bound</b> ({@code ub…}): everything the store may count. Every kind, a
 *       refund only where the store said it gave back and giving back is exact (fixed window,
 *       sliding log, sliding window counter, leases), lost leases until their grace ends
 *       (see {@link Invariants}), since the last definite wipe (possible units from lost replies
 *       even from before it: a reply lost before a wipe may have run after it). Liveness uses
 *       it: a rejection is a lockout only if even this bound leaves room.</li>
 * </ul>
 */
final class Ledger {

    final String domain;
    final String rule;
    final String key;
    private final List<Unit> units = new ArrayList<>();
    private Rule current;
    private int safetyEpoch;
    private int wipe;
    private long livenessFrom = Long.MIN_VALUE;
    /** {at, until, instance}: room made by an instance that others' deny caches cannot see until then. */
    private final List<long[]> replays = new ArrayList<>();
    /** When the state was last deleted, or may have been. */
    private long wipedAt = Long.MIN_VALUE;
    /**
     * Where a bucket's upper bound starts: the index of the first unit after the last edit or
     * definite wipe, when, and with what debt (ticks): none after a wipe; after an edit the
     * most an edited bucket can read from its old state, two full buckets of the new rule
     * (the old debt in whole units, capped), since a chain of counted rejections can carry it
     * past any horizon.
     */
    private int bucketFrom;
    private long bucketFromAt = Long.MIN_VALUE;
    private long bucketFromDebt;
    /** Times room was made other than by time passing: edits, wipes, refunds, releases. */
    private int room;
    /** Whether a lease of this ledger was ever lost (freed later, at a time no event says). */
    private boolean lostLease;
    /**
     * The longest a state written under any rule this ledger has had can weigh after its
     * write, read under the rule of the moment: its lifetime, or its horizon after an edit.
     */
    private long longestWeight;

    /**
     * How many full buckets of debt a bucket may hold: 2 (a counted rejection overdraws by one),
     * or in a history with costs known after the work, the charges' bound
     * ({@code Charges.DEBT_BUCKETS}).
     */
    private final long debtBuckets;

    Ledger(String domain, String rule, String key, Rule current) {
        this(domain, rule, key, current, 2);
    }

    Ledger(String domain, String rule, String key, Rule current, long debtBuckets) {
        this.domain = domain;
        this.rule = rule;
        this.key = key;
        this.current = current;
        this.debtBuckets = debtBuckets;
        this.longestWeight = current == null ? 0 : weight(current);
    }

    /**
     * The longest a state written before now can weigh: once this long has passed, nothing
     * the store holds from before counts, whatever became of it.
     *
     * @return ms
     */
    long longestWeight() {
        return longestWeight;
    }

    private long weight(Rule rule) {
        return Math.max(Invariants.lifetime(rule, debtBuckets), horizon(rule, debtBuckets));
    }

    /** When the state was last deleted, or may have been; {@code Long.MIN_VALUE} if never. */
    long wipedAt() {
        return wipedAt;
    }

    /** The rule as it is now. */
    Rule current() {
        return current;
    }

    /**
     * How many times room was made other than by time passing (edits, wipes, refunds and
     * releases): a promise made before holds only while this stays the same.
     */
    int room() {
        return room;
    }

    /** Room was made: units given back or released, or maybe so. */
    void roomMade() {
        room++;
    }

    /** Whether a lease was ever lost here. */
    boolean lostLease() {
        return lostLease;
    }

    /** A lease was lost: it is freed at a time no event says. */
    void leaseLost() {
        lostLease = true;
        room++;
    }

    /**
     * Liveness waits until {@code at}: room was made where a deny cache of another instance cannot
     * see it, and it may replay its rejection until then.
     *
     * @param at client ms
     */
    void livenessNotBefore(long at) {
        livenessFrom = Math.max(livenessFrom, at);
    }

    /**
     * Room was made at {@code at} by instance {@code by} (a give-back): another instance's deny
     * cache cannot see it and may replay a rejection remembered before it until {@code until}
     * (README, {@code ratelimit.deny-cache.max-hold}). The instance that made it forgets its own.
     */
    void othersMayReplay(long at, long until, int by) {
        replays.add(new long[] {at, until, by});
    }

    /**
     * Whether a rejection by {@code instance} at {@code t} may be another instance's deny cache
     * replaying one remembered before room was made (see {@link #othersMayReplay}).
     */
    boolean mayReplay(long t, int instance) {
        for (long[] replay : replays) {
            if (t >= replay[0] && t < replay[1] && instance != replay[2]) {
                return true;
            }
        }
        return false;
    }

    /** Client ms from which liveness is checked: the state written under older rules no longer weighs. */
    long livenessFrom() {
        return livenessFrom;
    }

    /**
     * The rule was edited at {@code at}. Safety restarts: units taken under the old rule are
     * left out of the lower bound, which only lowers it (they still weigh on the new rule, "never
     * less"), except leases, which keep their own timeouts whatever the rule says, and a fixed
     * window's whose window stays, which count on as they were. Liveness
     * waits until the old state cannot weigh any more: its horizon and the new rule's.
     *
     * @param edited the rule from now on
     * @param at     when
     */
    void edit(Rule edited, long at) {
        room++;
        // A fixed window whose window stays (its limit edited) keeps counting the same units: its
        // state is the window's end and count, whatever the limit, so they stay in the bound.
        boolean sameWindow = edited.algorithm() == Algorithm.FIXED_WINDOW && current.algorithm() == Algorithm.FIXED_WINDOW
                && edited.window().equals(current.window()) && java.util.Objects.equals(edited.calendar(), current.calendar());
        if (!edited.algorithm().isConcurrency() && !sameWindow) {
            safetyEpoch++;
        }
        livenessFrom = Math.max(livenessFrom, at + horizon(current, debtBuckets) + horizon(edited, debtBuckets));
        current = edited;
        longestWeight = Math.max(longestWeight, weight(edited));
        bucketFrom = units.size();
        bucketFromAt = at;
        bucketFromDebt = debtBuckets * edited.burst() * edited.window().toMillis();
    }

    /**
     * The state was written at {@code at} under {@code by}, a rule other than the current one (a
     * charge after the work, made by the rule its request was admitted by, edited since): the
     * current rule reads it as after an edit from {@code by}. Safety restarts unless both are
     * fixed windows of one window (the count goes on as it was); liveness waits out both horizons.
     */
    void rewritten(Rule by, long at) {
        room++;
        boolean sameWindow = by.algorithm() == Algorithm.FIXED_WINDOW && current.algorithm() == Algorithm.FIXED_WINDOW
                && by.window().equals(current.window()) && java.util.Objects.equals(by.calendar(), current.calendar());
        if (!sameWindow) {
            safetyEpoch++;
        }
        livenessFrom = Math.max(livenessFrom, at + horizon(by, debtBuckets) + horizon(current, debtBuckets));
        longestWeight = Math.max(longestWeight, weight(by));
        bucketFrom = units.size();
        bucketFromAt = at;
        bucketFromDebt = debtBuckets * current.burst() * current.window().toMillis();
    }

    /**
     * The state was deleted ({@code definite}) or may have been (a reset that threw).
     *
     * @param at       when
     * @param definite whether it certainly was
     * @param behind   whether it was deleted behind the limiter's back (a fault injected): a
     *                 rejection the deny cache remembers from before then is still its to
     *                 replay, so liveness waits out the longest retry-after the rule can give, or
     *                 the deny cache's hold ({@code hold}) when that is shorter: no replay outlasts it
     * @param hold     the deny cache's longest hold in ms, 0 without one
     */
    void wipe(long at, boolean definite, boolean behind, long hold) {
        wipedAt = Math.max(wipedAt, at);
        room++;
        safetyEpoch++;
        if (definite) {
            wipe++;
            bucketFrom = units.size();
            bucketFromAt = at;
            bucketFromDebt = 0;
        }
        if (behind) {
            long longest = Math.max(horizon(current, debtBuckets), Calendars.longest(current));
            livenessFrom = Math.max(livenessFrom, at + (hold > 0 ? Math.min(hold, longest) : longest));
        }
    }

    /**
     * How long state written under a rule can still change a decision after an edit: a fixed
     * window's count until its end, a sliding window counter's for two windows, a bucket's debt
     * of up to two full buckets until refilled. A sliding log's entries and leases keep their own
     * times, which the upper bound reads as they are, so they need none.
     */
    static long horizon(Rule rule) {
        return horizon(rule, 2);
    }

    /** {@link #horizon(Rule)} for a bucket that may hold {@code debtBuckets} full buckets of debt. */
    static long horizon(Rule rule, long debtBuckets) {
        long window = rule.window().toMillis();
        return switch (rule.algorithm()) {
            case FIXED_WINDOW -> Calendars.longest(rule);
            case SLIDING_WINDOW_COUNTER -> 2 * window;
            case TOKEN_BUCKET, GCRA -> debtBuckets * ceilDiv(rule.burst() * window, rule.limit()) + 1
                    + rule.maxDelay().toMillis();
            case SLIDING_LOG, CONCURRENCY -> 0;
        };
    }

    /**
     * Units charged after the work (a cost known after it): counted from {@code at} (certainly
     * by {@code latest}) when the store said it charged them whole; otherwise only maybe.
     */
    Unit charge(long op, long at, long latest, long units, boolean whole, long reservation) {
        Unit unit = add(op, at, latest, units, whole ? Unit.Kind.TAKEN : Unit.Kind.POSSIBLE, reservation);
        unit.charge = true;
        return unit;
    }

    /**
     * While true, the lower bound leaves charges out: the safety of an admission a local lease
     * served, whose unit the store counted when the lease was taken, before any charge made since
     * (a charge counts above the limit by design; what was admitted stays within it).
     */
    private boolean admissionsOnly;

    /** Runs a check on the lower bound of admissions alone (see {@link #admissionsOnly}). */
    <T> T admissionsOnly(java.util.function.Supplier<T> check) {
        admissionsOnly = true;
        try {
            return check.get();
        } finally {
            admissionsOnly = false;
        }
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /**
     * Adds units.
     *
     * @return the unit, for refunds and lost leases to find later
     */
    Unit add(long op, long at, long cost, Unit.Kind kind, long reservation) {
        return add(op, at, at, cost, kind, reservation);
    }

    /**
     * Adds units counted at a time in [{@code at}, {@code latest}] (the server clock's).
     *
     * @return the unit, for refunds and lost leases to find later
     */
    Unit add(long op, long at, long latest, long cost, Unit.Kind kind, long reservation) {
        Unit unit = new Unit(op, at, cost, kind, current.window().toMillis(), safetyEpoch, wipe, reservation);
        unit.latest = latest;
        if (!units.isEmpty() && at < units.get(units.size() - 1).at) {
            // A unit held for a slot passes then: its time may come after a later call's.
            unordered = true;
        }
        units.add(unit);
        return unit;
    }

    /** Whether some unit's time comes before an earlier-added one's (units held for slots). */
    private boolean unordered;

    /**
     * From when the upper bound counts a unit: its earliest time, or for a unit held for a slot
     * (counted by the lower bound from its slot) the decision's latest, from which the store's
     * debt holds it.
     */
    private static long upperStart(Unit unit) {
        return Math.min(unit.at, unit.latest);
    }

    /** The latest time the upper bound reads a unit at, judged at {@code t}: no later than {@code t}. */
    private static long upperTime(Unit unit, long t) {
        return Math.min(unit.latest, t);
    }

    /**
     * The taken units of a reservation.
     *
     * @param reservation the op that reserved
     * @return the unit, or null
     */
    Unit ofReservation(long reservation) {
        for (int i = units.size() - 1; i >= 0; i--) {
            Unit unit = units.get(i);
            if (unit.reservation == reservation && unit.kind == Unit.Kind.TAKEN) {
                return unit;
            }
        }
        return null;
    }

    /**
     * Whether a unit is in the lower bound: taken units, and for a fixed window the attempts a
     * count-rejected rule recorded in a call the store answered, which its count adds up as it
     * does units (the other algorithms bound what attempts add: a log keeps its newest
     * {@code limit} entries, a window counter's count stops at its limit, so what they still
     * count after a refund is not the sum).
     */
    private boolean lower(Unit unit) {
        boolean counted = unit.kind == Unit.Kind.TAKEN
                || unit.kind == Unit.Kind.ATTEMPT && current.algorithm() == Algorithm.FIXED_WINDOW;
        return counted && unit.refund == Unit.Refund.NONE && unit.safetyEpoch == safetyEpoch
                && !(admissionsOnly && unit.charge);
    }

    /** Whether a unit is in the upper bound, as far as refunds and wipes go (not leases). */
    private boolean upper(Unit unit, boolean exactRefunds) {
        if (unit.kind != Unit.Kind.POSSIBLE && unit.wipe != wipe) {
            return false;
        }
        return !(exactRefunds && unit.refund == Unit.Refund.GIVEN);
    }

    /** Lower bound of the units taken at times in [from, to]: those certainly taken within it. */
    long lbSum(long from, long to) {
        long sum = 0;
        for (Unit unit : units) {
            if (unit.at >= from && unit.latest <= to && lower(unit)) {
                sum += unit.kept;
            }
        }
        return sum;
    }

    /**
     * Upper bound of the units counted at times in [from, to]: those that may have been counted
     * within it (window algorithms: refunds exact).
     */
    long ubSum(long from, long to) {
        long sum = 0;
        for (Unit unit : units) {
            if (unit.latest >= from && unit.at <= to && upper(unit, true)) {
                sum += unit.kept;
            }
        }
        return sum;
    }

    /** Leases certainly held: taken by {@code takenBy} and not timed out at {@code until}. */
    long lbHeld(long takenBy, long until) {
        long sum = 0;
        for (Unit unit : units) {
            if (unit.kind == Unit.Kind.TAKEN && unit.refund == Unit.Refund.NONE && unit.safetyEpoch == safetyEpoch
                    && unit.latest <= takenBy && unit.at + unit.window > until) {
                sum += unit.cost;
            }
        }
        return sum;
    }

    /** The earliest take time of the leases {@link #lbHeld} counts, for the report. */
    long lbHeldSince(long takenBy, long until) {
        long since = takenBy;
        for (Unit unit : units) {
            if (unit.kind == Unit.Kind.TAKEN && unit.refund == Unit.Refund.NONE && unit.safetyEpoch == safetyEpoch
                    && unit.latest <= takenBy && unit.at + unit.window > until) {
                since = Math.min(since, unit.at);
            }
        }
        return since;
    }

    /** Leases that may be held at {@code t} as seen by operation {@code op}. */
    long ubHeld(long t, long op) {
        long sum = 0;
        for (Unit unit : units) {
            // Timed out by t only if even taken at its latest it has (its lease counts from there).
            if (unit.at > t || unit.latest != Long.MAX_VALUE && unit.latest + unit.window <= t) {
                continue;
            }
            if (unit.kind != Unit.Kind.POSSIBLE && unit.wipe != wipe) {
                continue;
            }
            boolean held = switch (unit.kind) {
                case POSSIBLE -> op <= unit.freeAfterOp;
                default -> switch (unit.refund) {
                    case NONE -> true;
                    case GIVEN -> false;
                    case MAYBE -> op <= unit.freeAfterOp;
                };
            };
            if (held) {
                sum += unit.cost;
            }
        }
        return sum;
    }

    /**
     * A bucket (token bucket, GCRA) run over the lower bound's units on the current rule, in its
     * ticks (one unit = window ticks, limit ticks refilled per ms), from an empty bucket at the
     * epoch's start: its debt at {@code t} and when its current busy period began (the start of
     * the interval that witnesses a breach).
     *
     * @return {debt in ticks, busy-period start}
     */
    long[] lbDebt(long t) {
        return debt(t, true);
    }

    /**
     * The same over the upper bound's units since the last edit or wipe, from the most debt the
     * state can hold then (see {@link #bucketFrom}), refunds ignored (a bucket's refund may be
     * partial), uncapped (the store caps a counted rejection's overdraw, which only lowers its
     * debt). A possible unit from before then (a lost reply that may have run later) counts as
     * taken then.
     *
     * @return {debt in ticks, busy-period start}
     */
    long[] ubDebt(long t) {
        return debt(t, false);
    }

    /**
     * The refill the upper bound's bucket lost (full, at zero debt) in {@code [from, t]}, ticks,
     * since the last edit or wipe: at least what the store's bucket without leases lost, and so
     * at least what units a fault left counted in the store have refilled away since (units the
     * store counts beyond the history only go once the history's bucket would be full).
     */
    long ubLost(long from, long t) {
        long window = current.window().toMillis();
        long limit = current.limit();
        long debt = bucketFromDebt;
        long last = bucketFromAt == Long.MIN_VALUE ? Long.MIN_VALUE : bucketFromAt;
        long lost = 0;
        for (int i = bucketFrom; i < units.size(); i++) {
            Unit unit = units.get(i);
            if (upperStart(unit) > t || !upper(unit, false)) {
                continue;
            }
            long time = Math.max(upperTime(unit, t), last);
            if (last != Long.MIN_VALUE) {
                lost += lostBetween(debt, last, time, from, limit);
                debt = Math.max(0, debt - (time - last) * limit);
            }
            debt += unit.cost * window;
            last = time;
        }
        if (last != Long.MIN_VALUE) {
            lost += lostBetween(debt, last, t, from, limit);
        } else {
            lost += Math.max(0, t - from) * limit;
        }
        return lost;
    }

    /** The refill a bucket of {@code debt} at {@code a} loses by {@code b}, counted from {@code from}. */
    private static long lostBetween(long debt, long a, long b, long from, long limit) {
        long full = a + (debt + limit - 1) / limit; // when it is full
        long start = Math.max(full, Math.max(a, from));
        return Math.max(0, b - start) * limit;
    }

    private long[] debt(long t, boolean lower) {
        long window = current.window().toMillis();
        long limit = current.limit();
        long debt = lower ? 0 : bucketFromDebt;
        long last = lower || bucketFromAt == Long.MIN_VALUE ? Long.MIN_VALUE : bucketFromAt;
        long busySince = t;
        // The lower bound runs the bucket over its units in the order they pass (held ones at
        // their slots); the upper bound reads each at its latest, never before the one before.
        List<Unit> ordered = units;
        if (lower && unordered) {
            ordered = new ArrayList<>(units);
            ordered.sort(java.util.Comparator.comparingLong(unit -> unit.at));
        }
        for (int i = 0; i < ordered.size(); i++) {
            Unit unit = ordered.get(i);
            if ((lower ? unit.at : upperStart(unit)) > t || !(lower ? lower(unit) : upper(unit, false))) {
                continue;
            }
            // The lower bound's units at their earliest, the upper bound's at their latest (up
            // to t): each reading refills the most, or the least, it can have between them.
            long time = lower ? unit.at : Math.max(upperTime(unit, t), last);
            if (!lower && i < bucketFrom) {
                if (unit.kind == Unit.Kind.POSSIBLE) {
                    debt += unit.cost * window;
                }
                continue;
            }
            if (last != Long.MIN_VALUE) {
                debt = Math.max(0, debt - (time - last) * limit);
            }
            if (debt == 0) {
                busySince = time;
            }
            debt += (lower ? unit.kept : unit.cost) * window;
            last = time;
        }
        if (last != Long.MIN_VALUE) {
            debt = Math.max(0, debt - (t - last) * limit);
        }
        return new long[] {debt, debt == 0 ? t : busySince};
    }
}
