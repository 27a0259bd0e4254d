package dev.ratelimit.valkey.lease;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.script.Lending;
import dev.ratelimit.valkey.script.Refund;
import dev.ratelimit.valkey.script.StoreOutcome;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A request decided with leases: each claim takes what its key's live lease holds, up to its
 * cost; the claims not served whole go to the store in one call, for the rest of their cost
 * and, when their key's demand calls for one, a new lease beside it. All or nothing, as without
 * leases: units taken from leases go back to them when the request is rejected, or when the store
 * call fails (the rule's policy decides the request then). When a call that
 * asked for lease units is rejected, the request is asked again without them (a second call), so
 * that a lease never turns an allowed request into a rejected one; no lease is asked for a
 * request with a rule that counts rejected attempts, which would count the first call's, and
 * such a request, asked once, finds this instance's own leases of its keys given back first.
 */
public final class LeaseTaker {

    private final Leases leases;
    private final BiFunction<List<Claim>, Lending, StoreOutcome> store;
    private final RateLimitListener listener;

    /**
     * A taker over the leases.
     *
     * @param leases the limiter's leases
     * @param store    the store's acquiring call(s) for claims and what leases they take beside them
     * @param listener told of each claim of an allowed request a lease served whole, with no call
     *                 for its rule ({@link RateLimitListener.Event#LEASE_HIT})
     */
    public LeaseTaker(Leases leases, BiFunction<List<Claim>, Lending, StoreOutcome> store, RateLimitListener listener) {
        this.leases = leases;
        this.store = store;
        this.listener = listener;
    }

    /**
     * What one claim of an allowed request took, to give back should another layer refuse the
     * request: units a lease served, and units the store took for it (with, beside them, a new
     * lease, which then takes them back).
     *
     * @param served units a live lease served, or null
     * @param stored the units the store took for the request (its cost less what a lease served),
     *               or null when the store was not asked for it
     * @param answer the store's answer: its undo values give {@code stored} back
     * @param lease  the lease the same call took, or null
     * @param at     the limiter's clock when the call was sent
     */
    record Portion(Lease.Served served, Claim stored, Verdicts.Answer answer, Lease lease, long at) {
    }

    /**
     * A request's outcome, and what each of its claims took.
     *
     * @param outcome  the decisions and the answers
     * @param portions per claim, in order
     */
    public record Taken(StoreOutcome outcome, List<Portion> portions) {
    }

    /**
     * A request's decisions: from leases where they hold enough, the rest from the store.
     *
     * @param claims the request's claims
     * @return the decisions and each claim's answer
     */
    public StoreOutcome take(List<Claim> claims) {
        return takeWithPortions(claims).outcome();
    }

    /**
     * Decides a request as {@link #take} does, keeping what each claim took.
     *
     * @param claims the claims
     * @return the outcome and the portions
     */
    public Taken takeWithPortions(List<Claim> claims) {
        long start = leases.now();
        int n = claims.size();
        LeasePolicy[] policies = new LeasePolicy[n];
        Lease.Served[] served = new Lease.Served[n];
        List<Integer> toStore = new ArrayList<>(n);
        // Served whole by a lease: no part of the claim goes to the store.
        boolean[] whole = new boolean[n];
        boolean countsRejected = false;
        for (int i = 0; i < n; i++) {
            Claim claim = claims.get(i);
            policies[i] = leases.policy(claim);
            served[i] = policies[i] == null ? null : leases.serve(claim, policies[i], start);
            if (served[i] == null || served[i].units() < claim.cost()) {
                toStore.add(i);
            } else {
                whole[i] = true;
            }
            countsRejected |= claim.rule().countRejected();
        }
        List<Verdicts.Answer> answers = new ArrayList<>(n);
        List<Portion> portions = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            answers.add(served[i] == null ? null : served[i].answer());
            portions.add(new Portion(served[i], null, null, null, start));
        }
        if (toStore.isEmpty()) {
            endUsedUp(claims, served);
            boolean[] tookAhead = countsRejected ? new boolean[n] : takeAhead(claims, policies, served);
            for (int i = 0; i < n; i++) {
                if (!tookAhead[i]) {
                    hit(claims.get(i));
                }
            }
            return new Taken(new StoreOutcome(Verdicts.combine(claims, answers, false), answers), portions);
        }
        long[] extra = new long[n];
        boolean asked = false;
        for (int i : toStore) {
            if (policies[i] != null && !countsRejected) {
                extra[i] = leases.extra(claims.get(i), policies[i], start);
                asked |= extra[i] > 0;
            }
        }
        long[] askedFor = extra;
        if (countsRejected) {
            returnOwn(Claims.pick(claims, toStore));
        }
        // False until the store allowed the request: a rejection and a failed call (the rule's
        // on-failure policy then decides) alike give the lease units back.
        boolean allowed = false;
        List<Claim> written = Claims.pick(claims, toStore);
        List<LeaseEntry> writing = leases.writing(written);
        try {
            long landed = leases.landed();
            StoreOutcome stored = store.apply(sent(claims, toStore, served, extra), lending(claims, extra));
            if (asked && !stored.decisions().allowed()) {
                extra = new long[n];
                stored = store.apply(sent(claims, toStore, served, extra), Lending.NONE);
            }
            if (!stored.decisions().allowed() && !countsRejected) {
                // Refused: nothing taken to count. Its keys' leases go back on this thread, which
                // their give-back would otherwise wait for (see Leases#writing).
                leases.written(writing);
                writing = List.of();
                boolean again = reclaimed(claims, toStore, policies, stored, landed);
                writing = leases.writing(written);
                if (again) {
                    // This instance's own leases held back what the request needed: given back, asked again.
                    extra = new long[n];
                    stored = store.apply(sent(claims, toStore, served, extra), Lending.NONE);
                }
            }
            allowed = stored.decisions().allowed();
            for (int i = 0; allowed && i < n; i++) {
                if (whole[i]) {
                    hit(claims.get(i));
                }
            }
            for (int j = 0; j < toStore.size(); j++) {
                int i = toStore.get(j);
                Claim claim = claims.get(i);
                Verdicts.Answer answer = stored.answers().get(j);
                long own = claim.cost() - (served[i] == null ? 0 : served[i].units());
                Lease lease = null;
                if (policies[i] != null) {
                    Leases.Taken taken = leases.taken(claim, own, policies[i], allowed ? extra[i] : 0, answer, start);
                    lease = taken.lease();
                }
                portions.set(i, new Portion(served[i], Claim.of(claim.rule(), claim.key(), own), answer, lease, start));
                answers.set(i, lease == null ? answer : lease.served(start));
            }
        } finally {
            // Settled first: the lease is in (or none came), and while taking holds no lease is
            // taken ahead for the key. A written that asks for a deferred give-back (waking the
            // sweeper's thread) delayed it enough for the new lease to run dry under the key's
            // other threads with none ahead: they then found it empty with no call on its way and
            // each went to the store (see Leases#extra).
            for (int i : toStore) {
                if (askedFor[i] > 0) {
                    leases.settled(claims.get(i));
                }
            }
            leases.written(writing);
            if (!allowed) {
                for (int i = 0; i < n; i++) {
                    if (served[i] != null) {
                        leases.putBack(claims.get(i), served[i]);
                    }
                }
            } else {
                endUsedUp(claims, served);
            }
        }
        // Refused stays refused: the store may refuse a request each of whose answers allows (on a
        // cluster, slot groups read again after one refused, on the server clock time moved on).
        return new Taken(new StoreOutcome(Verdicts.combine(claims, answers, !allowed), answers), portions);
    }

    /** An allowed request's units of this claim came whole from a lease, with no call for its rule. */
    private void hit(Claim claim) {
        listener.onEvent(claim.rule().name(), RateLimitListener.Event.LEASE_HIT);
    }

    /** The leases an allowed request ran out end now (see {@link Leases#kept}). */
    private void endUsedUp(List<Claim> claims, Lease.Served[] served) {
        for (int i = 0; i < claims.size(); i++) {
            if (served[i] != null) {
                leases.kept(claims.get(i), served[i]);
            }
        }
    }

    /**
     * Ends, and gives back at once, this limiter's leases of the keys whose rules refused the
     * request: units a lease holds unused, and a bucket's margin, are held back from this
     * instance's own requests too, which without leases the store would have let in.
     *
     * @return whether a lease was ended, so that asking again may be answered otherwise
     */
    private boolean reclaimed(List<Claim> claims, List<Integer> toStore, LeasePolicy[] policies,
                              StoreOutcome stored, long landed) {
        boolean reclaimed = false;
        for (int j = 0; j < toStore.size(); j++) {
            int i = toStore.get(j);
            if (policies[i] != null && !stored.answers().get(j).allowed()) {
                reclaimed |= leases.reclaim(claims.get(i), landed);
            }
        }
        return reclaimed;
    }

    /** A reservation took the claims' units at {@code at}: what of them leasing rules took counts as this instance's (see {@link Leases#reserved}). */
    public void reserved(List<Claim> claims, List<Verdicts.Answer> answers, long at) {
        for (int i = 0; i < claims.size(); i++) {
            if (answers.get(i).allowed() && answers.get(i).took()) {
                leases.reserved(claims.get(i), answers.get(i), at);
            }
        }
    }

    /** A reservation gave back the claims' units: {@code given} what the store took back of each (see {@link Leases#returned}). */
    public void unreserved(List<Claim> claims, long[] given) {
        for (int i = 0; i < claims.size(); i++) {
            leases.returned(claims.get(i), given[i]);
        }
    }

    /** A call writing the claims' keys is about to read its clock (see {@link Leases#writing}). */
    public List<LeaseEntry> writing(List<Claim> claims) {
        return leases.writing(claims);
    }

    /** The call {@link #writing} announced is over and counted (see {@link Leases#written}). */
    public void written(List<LeaseEntry> writing) {
        leases.written(writing);
    }

    /** The lease clock now. */
    public long now() {
        return leases.now();
    }

    /** A mark of the give-backs landed so far, taken before a store call (see {@link #reclaimed(List, StoreOutcome, long)}). */
    public long mark() {
        return leases.landed();
    }

    /**
     * Before a call that cannot be asked again, one with a rule that counts rejected attempts
     * (asked again, it would count the first): this limiter's leases of the claims' keys go back
     * first, so that they do not hold the request back; one instance is never refused for its
     * own leases. Nothing is sent when it holds none.
     */
    public void returnOwn(List<Claim> claims) {
        for (Claim claim : claims) {
            if (leases.policy(claim) != null) {
                leases.reclaim(claim, 0);
            }
        }
    }

    /**
     * For a request decided by the store alone (a reservation): {@link #reclaimed} its refused
     * claims' leases, so that the caller may ask again; never for a request with a rule that counts
     * rejected attempts (asked again, it would count the first: {@link #returnOwn} came first).
     *
     * @param mark {@link #mark()} before the refused call was sent
     */
    public boolean reclaimed(List<Claim> claims, StoreOutcome stored, long mark) {
        LeasePolicy[] policies = new LeasePolicy[claims.size()];
        List<Integer> all = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            if (claims.get(i).rule().countRejected()) {
                return false;
            }
            policies[i] = leases.policy(claims.get(i));
            all.add(i);
        }
        return reclaimed(claims, all, policies, stored, mark);
    }

    /**
     * Gives back what the claims of an allowed request took: to the lease that served them (or,
     * once it has ended, to the store on their own); the rest to the store by the call's undo
     * values.
     *
     * @param claims   the request's claims
     * @param portions what each took
     * @param indexes  the claims to give back
     * @param store    gives units back to the store: for each claim, whether it gave anything back
     * @return the indexes of the claims that gave units back
     */
    public List<Integer> giveBack(List<Claim> claims, List<Portion> portions, List<Integer> indexes,
                           Function<List<Refund>, long[]> store) {
        if (indexes.isEmpty()) {
            // Every allowed request ends here (a commit gives back its concurrency units only).
            settled(portions);
            return List.of();
        }
        List<Integer> given = new ArrayList<>();
        List<Integer> toStore = new ArrayList<>();
        for (int i : indexes) {
            Portion portion = portions.get(i);
            Claim claim = claims.get(i);
            boolean back = false;
            if (portion.served() != null && portion.served().units() > 0) {
                leases.putBack(claim, portion.served());
                back = true;
            }
            if (portion.stored() != null && portion.stored().cost() > 0 && portion.answer().took()) {
                // The lease the same call took no longer counts these units as admitted; if it ended
                // counting them already, they stay counted (withheld, never granted twice).
                if (leases.policy(claim) == null
                        || leases.disown(claim, portion.stored().cost(), portion.lease(), portion.at())) {
                    toStore.add(i);
                    continue;
                }
            }
            if (back) {
                given.add(i);
            }
        }
        if (!toStore.isEmpty()) {
            List<LeaseEntry> writing = leases.writing(toStore.stream().map(claims::get).toList());
            try {
                long[] back = store.apply(toStore.stream()
                        .map(i -> Refund.of(portions.get(i).stored(), portions.get(i).answer())).toList());
                for (int j = 0; j < toStore.size(); j++) {
                    int i = toStore.get(j);
                    if (leases.policy(claims.get(i)) != null) {
                        leases.returned(claims.get(i), back[j]);
                    }
                    if (back[j] > 0 || portions.get(i).served() != null && portions.get(i).served().units() > 0) {
                        given.add(i);
                    }
                }
            } finally {
                leases.written(writing);
            }
        }
        // What ended leases hold goes back now too: the request's answer describes the key after it.
        leases.flush();
        given.sort(null);
        return given;
    }

    /**
     * An allowed request is settled (committed, by its actual costs or not) and gives nothing back
     * to its leases: a lease of its own keys that ended (one it ran out) goes back now, on this
     * thread, so that the key's next answer counts it. A give-back of other keys on its way, which
     * holds the store's round trip, is waited for no longer than the lease's time.
     *
     * @param portions what the request's claims took
     */
    public void settled(List<Portion> portions) {
        List<Lease> own = new ArrayList<>(2);
        for (Portion portion : portions) {
            if (portion.served() != null) {
                own.add(portion.served().lease());
            }
            if (portion.lease() != null) {
                own.add(portion.lease());
            }
        }
        leases.flushEnded(own);
    }

    /**
     * After a request its leases served whole: the next lease of each key whose lease is due for
     * one ({@link Leases#ahead}), in a call of its own, so that the key's requests find it there
     * when this one runs out instead of each asking Valkey meanwhile. The request is decided
     * already: a call refused or failed only means no lease is taken ahead.
     *
     * @return per claim, whether it made such a call
     */
    private boolean[] takeAhead(List<Claim> claims, LeasePolicy[] policies, Lease.Served[] served) {
        boolean[] called = new boolean[claims.size()];
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            long extra = served[i] == null ? 0 : leases.ahead(claim, policies[i], served[i].lease(), leases.now());
            if (extra == 0) {
                continue;
            }
            called[i] = true;
            List<LeaseEntry> writing = leases.writing(List.of(claim));
            long asked = leases.now();
            try {
                StoreOutcome stored = store.apply(List.of(Claim.of(claim.rule(), claim.key(), extra)),
                        new Lending(Map.of(claim.rule().name(), extra)));
                Verdicts.Answer answer = stored.answers().get(0);
                leases.taken(claim, 0, policies[i], answer.allowed() ? extra : 0, answer, asked);
            } catch (RateLimitException e) {
                // No lease ahead: the key's next request after this lease asks Valkey, as it would have.
            } finally {
                // Settled first, as in takeWithPortions.
                leases.settled(claim);
                leases.written(writing);
            }
        }
        return called;
    }

    /** What of each claim sent a new lease asks for. */
    private static Lending lending(List<Claim> claims, long[] extra) {
        Map<String, Long> byRule = new HashMap<>();
        for (int i = 0; i < claims.size(); i++) {
            if (extra[i] > 0) {
                byRule.put(claims.get(i).rule().name(), extra[i]);
            }
        }
        return byRule.isEmpty() ? Lending.NONE : new Lending(byRule);
    }

    /** The claims sent to the store: what leases did not serve, plus what a new lease asks. */
    private static List<Claim> sent(List<Claim> claims, List<Integer> toStore, Lease.Served[] served, long[] extra) {
        List<Claim> sent = new ArrayList<>(toStore.size());
        for (int i : toStore) {
            Claim claim = claims.get(i);
            long cost = claim.cost() - (served[i] == null ? 0 : served[i].units()) + extra[i];
            sent.add(cost == claim.cost() ? claim : Claim.of(claim.rule(), claim.key(), cost));
        }
        return sent;
    }
}
