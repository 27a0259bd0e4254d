package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.script.Refund;

/**
 * Units of one rule taken ahead for one key in one function call, served here without a round
 * trip until they run out or the lease ends. Guarded by its {@link Leases} entry.
 *
 * <p>The call took the request's own units, the lease's {@code size}, and for the buckets a
 * margin: the refill during the lease, charged so that a unit admitted late is still one the
 * bucket could have given at that moment (see {@link LeasePolicy#margin}). Once the lease no
 * longer serves (run out, replaced, its time over, or its key refused), what it did not use goes
 * back at once: its unused units and the margin, less the refill the bucket would have lost had
 * the lease not been taken.
 *
 * <p>Why that charge keeps the bucket's bound, and never gives back more than the lease held:
 * {@code docs/local-leases.md}, <i>What goes back</i>.
 */
public final class Lease {

    /** The claim as sent, with the lease's units and margin added to the request's own cost. */
    final Claim take;
    /** The take's answer: what the state held after it, and the undo values for the refund. */
    final Verdicts.Answer answer;
    /** The limiter's clock (ms) before the take was sent: the lease is timed from there. */
    final long start;
    /** When the lease ends: never after the end of a fixed window's current window. */
    final long ends;
    /** The units it took for later requests. */
    final long size;
    /** The margin charged with the take. */
    final long margin;
    /** Its key's entry, whose simulation its give-back reads (a bucket's lease); its lock guards the lease. */
    final LeaseEntry entry;
    /** The units its take lent (its size and margin; none for a remnant), which its give-back returns to the account. */
    final long lent;
    /** Units not served yet. */
    long left;
    /** Whether its give-back was worked out: the units it served count as admitted for good. Guarded by the entry. */
    private boolean settled;

    Lease(Claim take, Verdicts.Answer answer, long start, long ends, long size, long margin, LeaseEntry entry,
          long lent) {
        this.take = take;
        this.answer = answer;
        this.start = start;
        this.ends = ends;
        this.size = size;
        this.left = size;
        this.margin = margin;
        this.entry = entry;
        this.lent = lent;
    }

    /**
     * The lease a store call took beside a claim's own units; its entry counts it as lent.
     *
     * @param claim  the request's claim
     * @param own    the units of it the call took (its cost, less what an older lease served)
     * @param policy its rule's lease policy
     * @param extra  the units asked beside the claim's: the lease's and its margin
     * @param answer the call's answer, which took them
     * @param start  the limiter's clock before the call was sent
     * @param entry  its key's entry, locked by the caller
     */
    static Lease taken(Claim claim, long own, LeasePolicy policy, long extra, Verdicts.Answer answer, long start,
                       LeaseEntry entry) {
        Rule rule = claim.rule();
        long margin = policy.margin(rule);
        long ends = start + policy.time().toMillis();
        if (rule.algorithm() == Algorithm.FIXED_WINDOW) {
            // Never past the window that counted the units: the server's window ends
            // reset_after after it ran, which was no earlier than start.
            ends = Math.min(ends, start + answer.resetMillis());
        }
        if (rule.algorithm() != Algorithm.FIXED_WINDOW) {
            entry.lent(start, rule.limit());
        }
        return new Lease(Claim.of(rule, claim.key(), own + extra), answer, start, ends, extra - margin, margin, entry,
                extra);
    }

    /**
     * Units of this lease put back after it ended, to go back to the store on their own, with its
     * take and times and no margin (its own give-back has that); the entry, locked by the caller,
     * counts them as lent.
     */
    Lease remnant(long units, long now) {
        if (take.rule().algorithm() != Algorithm.FIXED_WINDOW && entry.current(answer.undo().which())) {
            entry.lent(now, take.rule().limit());
        }
        return new Lease(take, answer, start, ends, units, 0, entry, 0);
    }

    /** Whether it still serves at {@code now}. */
    boolean live(long now) {
        return now < ends;
    }

    /**
     * The answer for a request it served: the state as the take left it, plus what the lease
     * still holds for this key; times counted down from the take.
     */
    Verdicts.Answer served(long now) {
        long elapsed = Math.max(0, now - start);
        long next = answer.nextMillis() == 0 ? 0 : Math.max(1, answer.nextMillis() - elapsed);
        return new Verdicts.Answer(true, answer.remaining() + left, Math.max(0, answer.resetMillis() - elapsed),
                next, 0);
    }

    /**
     * Works out what goes back of the lease, now that it no longer serves (see the class comment):
     * its unused units and its margin, less the refill the bucket would have lost without it. A
     * fixed window's lease gives back its unused units to the window that counted them.
     *
     * @param now the limiter's clock as the give-back is sent
     * @return the refund, or null when there is nothing to give back
     */
    Refund giveBack(long now) {
        Rule rule = take.rule();
        synchronized (entry) {
            settled = true;
            if (rule.algorithm() == Algorithm.FIXED_WINDOW) {
                return left > 0 ? Refund.of(Claim.of(rule, take.key(), left), answer) : null;
            }
            if (!entry.current(answer.undo().which())) {
                // Taken from a debt the bucket has refilled since: nothing left there, and no
                // charge (the refill it lost, the store lost too; see LeaseEntry#generation).
                return null;
            }
            // At the simulation's time if later: the headroom must count from where its debt is.
            long at = entry.simulatedAt(now);
            long owed = (left + margin) * rule.window().toMillis();
            long charge = entry.charge(at, rule.limit(), owed);
            if (owed == 0 && lent == 0) {
                return null;
            }
            long headroom = Math.max(0, at - start) * rule.limit() + entry.debtAt(at, rule.limit()) - charge;
            return new Refund(Claim.of(rule, take.key(), left + margin), answer, charge, Math.max(0, headroom), lent);
        }
    }

    /**
     * The request whose call took this lease gives its own units back apart (another layer
     * refused it); the caller holds the entry's lock.
     *
     * @return false when the lease's give-back was worked out counting them as admitted: they
     *         must then stay counted (given back too, they could give back more than was taken)
     */
    boolean disown() {
        return !settled;
    }

    /**
     * Units of a lease serving a claim.
     *
     * @param lease  the lease
     * @param units  how many of the claim's cost it serves (all of it, or what it had left)
     * @param answer the claim's answer when it serves all of it
     * @param at     the limiter's clock when it served them
     */
    record Served(Lease lease, long units, Verdicts.Answer answer, long at) {
    }
}
