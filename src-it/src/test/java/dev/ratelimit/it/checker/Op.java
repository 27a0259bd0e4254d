package dev.ratelimit.it.checker;

import java.util.List;

/**
 * One step of a workload, as drawn from its seed. Steps name rules by index and keys by name,
 * so the same list of steps runs on whatever the rules have become by then (edits) and whatever
 * reservations are pending (outcomes): the list is fixed by the seed, what it does is recorded
 * in the history.
 */
sealed interface Op {

    /**
     * A claim to be: rule index, key, and cost ({@code 0}: the rule's capacity; larger than the
     * capacity: the capacity).
     */
    record ClaimSpec(int rule, String key, long cost) {
    }

    /** {@code acquireAll}, or {@code reserveAll} (the reservation joins the pending ones). */
    record Take(boolean reserve, List<ClaimSpec> claims) implements Op {
    }

    /** {@code peek}. */
    record Peek(ClaimSpec claim) implements Op {
    }

    /**
     * Settles a pending reservation, if any: the latest ({@code pick < 0}) or the
     * {@code pick mod size}-th; {@code how} is commit, cancel, cancel-one (rule
     * {@code rule} only, and the leases) or commit-cost (the work's cost known after it,
     * {@code actual}: {@code Reservation.commit(actual)}, the difference from each rule's
     * reserved cost given back or charged).
     */
    record Settle(int pick, String how, int rule, long actual) implements Op {

        /** A settlement without a cost of its own. */
        Settle(int pick, String how, int rule) {
            this(pick, how, rule, -1);
        }
    }

    /**
     * Moves the client clock: {@code how} is zero, one (1 ms), fraction ({@code amount} of
     * rule {@code rule}'s window), windows ({@code amount} whole windows), retry (the last
     * rejection's retry-after) or retry-early (1 ms less).
     */
    record Advance(String how, double amount, int rule) implements Op {
    }

    /** The last rejected call again, as it was (a caller retrying). */
    record Retry() implements Op {
    }

    /**
     * A rule edited: new limit, window and burst (burst ignored where it does not apply); a
     * fixed window's new calendar window ({@link Calendars#text}) or null for a rolling one.
     */
    record Edit(int rule, long limit, long windowMs, long burst, String calendar) implements Op {

        /** An edit to a rolling window. */
        Edit(int rule, long limit, long windowMs, long burst) {
            this(rule, limit, windowMs, burst, null);
        }
    }

    /** {@code reset} of one rule and key. */
    record Reset(ClaimSpec claim) implements Op {
    }

    /**
     * An operator's {@code reset} of one rule and key, as {@code ratelimit reset} does it: from a
     * limiter of its own on the same store (no leases, no deny cache, no fallback).
     */
    record OperatorReset(ClaimSpec claim) implements Op {
    }

    /** An operator's {@code inspect}, as {@code ratelimit inspect} does it: a peek from outside. */
    record Inspect(ClaimSpec claim) implements Op {
    }

    /**
     * Valkey stalled ({@code DEBUG SLEEP}) for {@code millis} on another thread while the
     * {@code during} steps are sent with a short socket timeout: their replies are lost. Then the
     * {@code after} steps, each {@value Runner#AFTER_STALL_PAUSE_MILLIS} ms of real time after
     * the one before: the chances the limiter has to release the leases of lost replies, and
     * then a step that needs them free.
     */
    record Stall(long millis, List<Op> during, List<Op> after) implements Op {
    }

    /**
     * A Sentinel failover ({@code SENTINEL FAILOVER}): the replica promoted while the
     * {@code during} steps go out, again and again, until every sentinel names the new primary;
     * the old primary then made its replica; then each instance's store peeks at {@code probe}
     * until the new primary answers it (its old primary refuses every function call now).
     */
    record Failover(List<Op> during, ClaimSpec probe) implements Op {
    }

    /** A lease, or units, reserved and given back at once if allowed: does the rule have room? */
    record Probe(ClaimSpec claim) implements Op {
    }

    /** {@code FUNCTION FLUSH}: the limiter's library gone until the next call loads it. */
    record Flush() implements Op {
    }

    /** A rule's state for a key replaced by a list, which no algorithm can read. */
    record Plant(int rule, String key) implements Op {
    }

    /** The planted key deleted: the state starts empty. */
    record Unplant(int rule, String key) implements Op {
    }

    /** The server stopped and started again on the same port: every state may be gone. */
    record Restart() implements Op {
    }

    /** The next {@code count} commands of the client of the instance next called throw an {@link Error}. */
    record ClientErrors(int count) implements Op {
    }

    /**
     * The first instance's client fails {@code resets} commands as a broken connection would
     * (enough to open its breaker), then throws {@code errors} Errors; {@code during} runs on
     * that instance, and then the runner waits out the breaker's open period, so that the next
     * call is its probe.
     */
    record Burst(int resets, int errors, List<Op> during) implements Op {
    }

    /**
     * The server stalls for {@code millis} while {@code threads} threads, started a few ms
     * apart, peek at the claims in turn on the first instance until it answers again.
     */
    record Crowd(long millis, int threads, List<ClaimSpec> peeks) implements Op {
    }
}
