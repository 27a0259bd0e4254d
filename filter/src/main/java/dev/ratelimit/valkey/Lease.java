package dev.ratelimit.valkey;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Verdicts;

/**
 * Units of one rule taken ahead for one key in one function call, served here without a round
 * trip until they run out or the lease ends. Guarded by its {@link Leases} entry.
 *
 * <p>The call took the request's units, the lease's {@code size}, and (for the buckets) a margin:
 * the refill during the lease, charged so that a unit admitted late is still one the bucket
 * could have given at that moment (see {@link LeasePolicy#margin}). Once the lease no longer
 * serves (run out, or its time over), what it did not use goes back in a refund of the unused
 * units plus the margin, with the take's undo values: the refund gives back what of them the
 * bucket cannot have refilled since the take, which is the unused units and the part of the
 * margin not yet refilled. The margin covered the refill while units were held and unused; with
 * none held any more, what of it has not refilled is owed to no one. A lease run out early so
 * does not keep its whole margin for its whole time, which would leave a key hammered within its
 * limit with less than its limit.
 */
final class Lease {

    /** The claim as sent, with the lease's units and margin added to the request's cost. */
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
    /** Units not served yet. */
    long left;

    Lease(Claim take, Verdicts.Answer answer, long start, long ends, long size, long margin) {
        this.take = take;
        this.answer = answer;
        this.start = start;
        this.ends = ends;
        this.size = size;
        this.left = size;
        this.margin = margin;
    }

    /**
     * The lease a store call took beside a claim's own units.
     *
     * @param claim  the request's claim
     * @param policy its rule's lease policy
     * @param extra  the units asked beside the claim's: the lease's and its margin
     * @param answer the call's answer, which took them
     * @param start  the limiter's clock before the call was sent
     */
    static Lease taken(Claim claim, LeasePolicy policy, long extra, Verdicts.Answer answer, long start) {
        Rule rule = claim.rule();
        long margin = policy.margin(rule);
        long ends = start + policy.time().toMillis();
        if (rule.algorithm() == Algorithm.FIXED_WINDOW) {
            // Never past the window that counted the units: the server's window ends
            // reset_after after it ran, which was no earlier than start.
            ends = Math.min(ends, start + answer.resetMillis());
        }
        return new Lease(Claim.of(rule, claim.key(), claim.cost() + extra), answer, start, ends, extra - margin, margin);
    }

    /**
     * Units of this lease put back after it ended, to go back to the store on their own: its
     * take and times, no margin (its own give-back has that). A refund of them apart from the
     * lease's own gives back no more than one of both would: each refund deducts the refill
     * since the take.
     */
    Lease remnant(long units) {
        return new Lease(take, answer, start, ends, units, 0);
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
     * The claim whose refund gives back what the lease did not use: its unused units and its
     * margin, of which the refund returns what the bucket has not refilled since the take.
     */
    Claim giveBack() {
        return Claim.of(take.rule(), take.key(), left + margin);
    }

    /** Whether a give-back would return anything: unused units, or a bucket's margin. */
    boolean owesBack() {
        return left + margin > 0;
    }

    /**
     * Units of a lease serving a claim.
     *
     * @param lease the lease
     * @param units how many of the claim's cost it serves (all of it, or what it had left)
     * @param answer the claim's answer when it serves all of it
     */
    record Served(Lease lease, long units, Verdicts.Answer answer) {
    }
}
