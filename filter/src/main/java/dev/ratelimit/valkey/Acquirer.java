package dev.ratelimit.valkey;

import dev.ratelimit.internal.QueuePlace;
import dev.ratelimit.internal.Refundable;
import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Reservation;
import dev.ratelimit.internal.Charges;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.lease.LeaseEntry;
import dev.ratelimit.valkey.lease.LeaseTaker;
import dev.ratelimit.valkey.lease.LeasedPeek;
import dev.ratelimit.valkey.lease.Leases;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.script.Charge;
import dev.ratelimit.valkey.script.Lending;
import dev.ratelimit.valkey.script.Refund;
import dev.ratelimit.valkey.script.ScriptMode;
import dev.ratelimit.valkey.script.StoreOutcome;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * What {@link ValkeyRateLimiter#acquireAll} and {@link ValkeyRateLimiter#reserveAll} share: a
 * request's acquiring call (one per slot group on a cluster, see {@link SlotGroups}), and the
 * giving back of what it took: by the reservation's holder, or at once for a cluster request
 * that one group rejected after others had taken units.
 */
final class Acquirer {

    private final LimiterCalls calls;
    private final Leases leases;
    private final LeaseTaker leased;

    Acquirer(LimiterCalls calls, Leases leases, RateLimitListener listener) {
        this.calls = calls;
        this.leases = leases;
        this.leased = leases.enabled() ? new LeaseTaker(leases, this::fromStore, listener) : null;
    }

    /**
     * What a request of these claims would be answered now, taking nothing: the store's answer
     * with the units this limiter's leases hold added. As for a request, this limiter's own leases
     * never make the answer a refusal: refused while it holds leases of the keys (what a bucket's
     * lease keeps back above all), they are given back and the store is asked again.
     */
    List<Verdicts.Answer> peek(List<Claim> claims) {
        if (leased == null) {
            return calls.answers(claims, ScriptMode.PEEK, calls.now());
        }
        long mark = leased.mark();
        List<Verdicts.Answer> stored;
        try {
            stored = calls.answers(claims, ScriptMode.PEEK, calls.now());
        } catch (RateLimitException e) {
            // A request the leases serve whole is answered without the store: so is its peek.
            return LeasedPeek.servedWhole(leases, claims).orElseThrow(() -> e);
        }
        List<Verdicts.Answer> answers = LeasedPeek.withHeld(leases, claims, stored);
        StoreOutcome peeked = new StoreOutcome(Verdicts.combine(claims, answers, false), answers);
        if (!peeked.decisions().allowed() && leased.reclaimed(claims, peeked, mark)) {
            answers = LeasedPeek.withHeld(leases, claims, calls.answers(claims, ScriptMode.PEEK, calls.now()));
        }
        return answers;
    }

    /** A request's decisions: from leases where the rules lease, else from the store. */
    StoreOutcome take(List<Claim> asked) {
        List<Claim> claims = Claims.checked(asked);
        if (leased == null) {
            return fromStore(claims);
        }
        // A request served from leases alone still gives lost concurrency permits their chance
        // to be released (tried at most every 100 ms, and only while there are any).
        calls.releaseLostPermits();
        return leased.take(claims);
    }

    private StoreOutcome fromStore(List<Claim> claims) {
        return fromStore(claims, Lending.NONE);
    }

    /**
     * The acquiring call(s): every claim's answer, to give back, and the request's decisions;
     * {@code lending} says what of the claims local leases take.
     */
    private StoreOutcome fromStore(List<Claim> claims, Lending lending) {
        // Before deciding, so that this request already finds the slots they held free.
        calls.releaseLostPermits();
        String now = calls.now();
        if (calls.cluster()) {
            List<SlotGroups.Group> groups = calls.slotGroups(claims);
            if (groups.size() > 1) {
                StoreOutcome outcome = SlotGroups.acquire(claims, groups,
                        (group, mode) -> calls.answers(group, lending, mode, now), this::giveBackQuietly);
                if (!outcome.decisions().allowed()) {
                    giveBackRaced(claims, outcome.answers());
                }
                return outcome;
            }
        }
        List<Verdicts.Answer> answers = calls.answers(claims, lending, ScriptMode.ACQUIRE, now);
        return new StoreOutcome(Verdicts.combine(claims, answers, false), answers);
    }

    /**
     * Takes the claims' units as {@link #take} does (from leases where the rules lease) and hands
     * back what can give them back, should another layer refuse the request: what leases served
     * goes back to them, the rest to the store.
     */
    Reservation takeUndoable(List<Claim> asked) {
        if (leased == null) {
            return reserve(asked);
        }
        List<Claim> claims = Claims.checked(asked);
        calls.releaseLostPermits();
        LeaseTaker.Taken taken = leased.takeWithPortions(claims);
        Decisions decisions = taken.outcome().decisions();
        if (!decisions.allowed()) {
            return Reservation.kept(decisions);
        }
        List<Verdicts.Answer> answers = taken.outcome().answers();
        return Refundable.of(decisions, which -> {
            List<Integer> indexes = new ArrayList<>();
            for (int i = 0; i < claims.size(); i++) {
                if (answers.get(i).allowed() && which.test(claims.get(i).rule())) {
                    indexes.add(i);
                }
            }
            return leased.giveBack(claims, taken.portions(), indexes, back -> calls.refund(back, true))
                    .stream().map(i -> claims.get(i).rule().name()).toList();
        }, actual -> {
            try {
                return adjust(claims, answers, actual, true);
            } finally {
                // Settled by its actual costs, it gives back none of its leases' units (see adjust).
                leased.settled(taken.portions());
            }
        }, QueuePlace.of(claims, answers));
    }

    /**
     * Takes the claims' units and hands back a reservation that can give them back. Never from a
     * lease: a reservation's units go back to the store, by its own undo values. Refused, it is
     * asked again once this instance's leases of the refused keys went back (see
     * {@link LeaseTaker#reclaimed(List, StoreOutcome, long)}): they are not to hold it back;
     * with a rule that counts rejected attempts, which cannot be asked twice, they go back first.
     */
    Reservation reserve(List<Claim> asked) {
        List<Claim> claims = Claims.checked(asked);
        if (leased != null && claims.stream().anyMatch(claim -> claim.rule().countRejected())) {
            leased.returnOwn(claims);
        }
        if (leased == null) {
            StoreOutcome taken = fromStore(claims);
            return reservation(claims, taken.answers(), taken.decisions());
        }
        // Its keys' give-backs wait for it until its units are counted (see Leases#writing).
        List<LeaseEntry> writing = leased.writing(claims);
        try {
            long mark = leased.mark();
            long at = leased.now();
            StoreOutcome taken = fromStore(claims);
            if (!taken.decisions().allowed()) {
                // Refused: nothing taken to count; the keys' leases go back on this thread first.
                leased.written(writing);
                writing = List.of();
                boolean again = leased.reclaimed(claims, taken, mark);
                writing = leased.writing(claims);
                if (again) {
                    at = leased.now();
                    taken = fromStore(claims);
                }
            }
            if (taken.decisions().allowed()) {
                leased.reserved(claims, taken.answers(), at);
            }
            return reservation(claims, taken.answers(), taken.decisions());
        } finally {
            leased.written(writing);
        }
    }

    private Reservation reservation(List<Claim> claims, List<Verdicts.Answer> answers, Decisions decisions) {
        if (!decisions.allowed()) {
            return Reservation.kept(decisions);
        }
        return Refundable.of(decisions, which -> giveBack(claims, answers, Verdicts.toGiveBack(claims, answers, which)),
                actual -> adjust(claims, answers, actual, false), QueuePlace.of(claims, answers));
    }

    /**
     * Settles a reservation by its actual costs (see {@link Reservation#commit(ToLongFunction)}):
     * concurrency permits released, the part of a reserved cost the work did not use given back,
     * what it used beyond charged. Units taken {@code undoably} may have come from a lease: a
     * rule this instance leases keeps them as they are (the filter refuses {@code cost-from}
     * with a lease). A reservation's never do: charged to the store, its rule's lease
     * simulation does not count them, which only makes a give-back smaller.
     */
    private Refundable.Charged adjust(List<Claim> claims, List<Verdicts.Answer> answers, ToLongFunction<Rule> actual,
                                      boolean undoably) {
        List<Refund> back = new ArrayList<>();
        List<Charge> charges = new ArrayList<>();
        for (int i : Verdicts.toGiveBack(claims, answers, rule -> true)) {
            Claim claim = claims.get(i);
            Charges.Adjustment adjustment = Charges.Adjustment.of(claim, actual.applyAsLong(claim.rule()));
            if (undoably && leased != null && leases.policy(claim) != null) {
                continue;
            }
            switch (adjustment.kind()) {
                case RELEASE -> back.add(Refund.of(claim, answers.get(i)));
                case GIVE_BACK -> back.add(Refund.of(Claim.of(claim.rule(), claim.key(), adjustment.units()),
                        answers.get(i)));
                case CHARGE -> charges.add(Charge.of(claim, adjustment.units()));
                case KEEP -> {
                }
            }
        }
        // Charged first: a charge that fails has then counted nothing, and its caller may put it
        // elsewhere (a failure policy) without counting anything twice. The give-backs go
        // either way: a concurrency permit is released (or remembered to be) whatever happened.
        List<String> charged = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        List<String> given = List.of();
        List<String> refundDropped = List.of();
        try {
            charge(charges, charged, dropped);
        } finally {
            try {
                given = giveBack(back);
            } catch (RateLimitException e) {
                refundDropped = back.stream().map(refund -> refund.claim().rule().name()).toList();
            }
        }
        return new Refundable.Charged(charged, dropped, given, refundDropped);
    }

    /** Charges work done for which nothing was reserved here; whether the store took all of it. */
    boolean charge(Charge charge) {
        List<String> charged = new ArrayList<>(1);
        charge(List.of(charge), charged, new ArrayList<>(1));
        return !charged.isEmpty();
    }

    /** Charges work done beyond what requests reserved: the rules the store took whole, and the others. */
    private void charge(List<Charge> charges, List<String> charged, List<String> dropped) {
        if (charges.isEmpty()) {
            return;
        }
        List<Claim> claims = charges.stream().map(Charge::claim).toList();
        List<LeaseEntry> writing = leased == null ? List.of() : leased.writing(claims);
        boolean[] whole;
        try {
            whole = calls.charge(charges);
        } finally {
            if (leased != null) {
                leased.written(writing);
            }
        }
        for (int i = 0; i < charges.size(); i++) {
            (whole[i] ? charged : dropped).add(claims.get(i).rule().name());
        }
    }

    /** A cluster request rejected by one group after others took units: those go back, best effort. */
    private void giveBackRaced(List<Claim> claims, List<Verdicts.Answer> answers) {
        List<Integer> taken = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            if (answers.get(i).took() && !claims.get(i).rule().countRejected()) {
                taken.add(i);
            }
        }
        giveBackQuietly(Claims.pick(claims, taken), taken.stream().map(answers::get).toList());
    }

    /**
     * Gives back what claims of a request that was not allowed took, best effort: the request is
     * answered either way, units that stay counted expire with their window, and leases that
     * could not be released are released later ({@link LostPermits}).
     */
    private void giveBackQuietly(List<Claim> claims, List<Verdicts.Answer> answers) {
        try {
            calls.refund(refunds(claims, answers), true);
        } catch (RateLimitException e) {
            // Counted until their window or refill frees them, which errs on the side of the limit.
        }
    }

    /** Gives back the units of the given claims; the names of the rules that gave any back. */
    private List<String> giveBack(List<Claim> claims, List<Verdicts.Answer> answers, List<Integer> indexes) {
        return giveBack(refunds(Claims.pick(claims, indexes), indexes.stream().map(answers::get).toList()));
    }

    /** Gives back the refunds' units; the names of the rules that gave any back. */
    private List<String> giveBack(List<Refund> refunds) {
        if (refunds.isEmpty()) {
            return List.of();
        }
        List<Claim> back = refunds.stream().map(Refund::claim).toList();
        List<LeaseEntry> writing = leased == null ? List.of() : leased.writing(back);
        long[] given;
        try {
            given = calls.refund(refunds, true);
            if (leased != null) {
                leased.unreserved(back, given);
            }
        } finally {
            if (leased != null) {
                leased.written(writing);
            }
        }
        List<String> rules = new ArrayList<>();
        for (int i = 0; i < back.size(); i++) {
            if (given[i] > 0) {
                rules.add(back.get(i).rule().name());
            }
        }
        return rules;
    }

    /** A reservation's refunds: each claim's units, by its answer's undo values. */
    private static List<Refund> refunds(List<Claim> claims, List<Verdicts.Answer> answers) {
        List<Refund> refunds = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            refunds.add(Refund.of(claims.get(i), answers.get(i)));
        }
        return refunds;
    }
}
