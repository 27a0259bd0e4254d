package dev.ratelimit.valkey;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A request decided with leases: each claim takes what its key's live lease holds, up to its
 * cost; the claims not served whole go to the store in one call, for the rest of their cost
 * and, when their key's demand calls for one, a new lease beside it. All or nothing, as without
 * leases: units taken from leases go back to them when the request is rejected, or when the store
 * call fails (the rule's policy decides the request then). When a call that
 * asked for lease units is rejected, the request is asked again without them (a second call), so
 * that a lease never turns an allowed request into a rejected one; no lease is asked for a
 * request with a rule that counts rejected attempts, which would count the first call's.
 */
final class LeasedTakes {

    private final Leases leases;
    private final Function<List<Claim>, SlotGroups.Outcome> store;

    LeasedTakes(Leases leases, Function<List<Claim>, SlotGroups.Outcome> store) {
        this.leases = leases;
        this.store = store;
    }

    SlotGroups.Outcome take(List<Claim> claims) {
        long start = leases.now();
        int n = claims.size();
        LeasePolicy[] policies = new LeasePolicy[n];
        Lease.Served[] served = new Lease.Served[n];
        List<Integer> toStore = new ArrayList<>(n);
        boolean countsRejected = false;
        for (int i = 0; i < n; i++) {
            Claim claim = claims.get(i);
            policies[i] = leases.policy(claim);
            served[i] = policies[i] == null ? null : leases.serve(claim, policies[i], start);
            if (served[i] == null || served[i].units() < claim.cost()) {
                toStore.add(i);
            }
            countsRejected |= claim.rule().countRejected();
        }
        List<Verdicts.Answer> answers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            answers.add(served[i] == null ? null : served[i].answer());
        }
        if (toStore.isEmpty()) {
            if (!countsRejected) {
                takeAhead(claims, policies, served);
            }
            return new SlotGroups.Outcome(Verdicts.combine(claims, answers, false), answers);
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
        // False until the store allowed the request: a rejection and a failed call (the rule's
        // on-failure policy then decides) alike give the lease units back.
        boolean allowed = false;
        try {
            SlotGroups.Outcome stored = store.apply(sent(claims, toStore, served, extra));
            if (asked && !stored.decisions().allowed()) {
                extra = new long[n];
                stored = store.apply(sent(claims, toStore, served, extra));
            }
            allowed = stored.decisions().allowed();
            for (int j = 0; j < toStore.size(); j++) {
                int i = toStore.get(j);
                Verdicts.Answer answer = stored.answers().get(j);
                if (policies[i] != null) {
                    answer = leases.taken(claims.get(i), policies[i], allowed ? extra[i] : 0, answer, start);
                }
                answers.set(i, answer);
            }
        } finally {
            for (int i : toStore) {
                if (askedFor[i] > 0) {
                    leases.settled(claims.get(i));
                }
            }
            if (!allowed) {
                for (int i = 0; i < n; i++) {
                    if (served[i] != null) {
                        leases.putBack(claims.get(i), served[i]);
                    }
                }
            }
        }
        return new SlotGroups.Outcome(Verdicts.combine(claims, answers, false), answers);
    }

    /**
     * After a request its leases served whole: the next lease of each key whose lease is due for
     * one ({@link Leases#ahead}), in a call of its own, so that the key's requests find it there
     * when this one runs out instead of each asking Valkey meanwhile. The request is decided
     * already: a call refused or failed only means no lease is taken ahead.
     */
    private void takeAhead(List<Claim> claims, LeasePolicy[] policies, Lease.Served[] served) {
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            long extra = served[i] == null ? 0 : leases.ahead(claim, policies[i], served[i].lease(), leases.now());
            if (extra == 0) {
                continue;
            }
            long asked = leases.now();
            try {
                SlotGroups.Outcome stored = store.apply(List.of(Claim.of(claim.rule(), claim.key(), extra)));
                Verdicts.Answer answer = stored.answers().get(0);
                leases.taken(claim, policies[i], answer.allowed() ? extra : 0, answer, asked);
            } catch (RateLimitException e) {
                // No lease ahead: the key's next request after this lease asks Valkey, as it would have.
            } finally {
                leases.settled(claim);
            }
        }
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
