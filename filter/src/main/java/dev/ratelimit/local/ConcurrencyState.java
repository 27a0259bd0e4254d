package dev.ratelimit.local;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.List;

/**
 * The in-process twin of {@code concurrency.lua}: the leases held, each named by the call that
 * took it and its sequence number in that call, with its timeout and when it times out.
 * Timed-out leases stop counting at once and are reclaimed by the next take. A call's number is
 * never reused, not even after a reset, so releasing old leases never releases new ones.
 */
final class ConcurrencyState implements KeyState {

    /** One unit in progress. */
    private record Lease(long call, long seq, long timeout, long expires) {
    }

    private final List<Lease> leases = new ArrayList<>();

    @Override
    public Verdicts.Answer take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected,
                        long call) {
        long timeout = rule.window().toMillis();
        long count = live(now);
        boolean allowed = count + cost <= rule.limit();
        boolean consume = allowed ? consumeIfAllowed : consumeIfRejected;
        if (consume) {
            leases.removeIf(lease -> lease.expires() <= now);
            for (long i = 0; i < cost; i++) {
                leases.add(new Lease(call, i, timeout, now + timeout));
            }
            count = leases.size();
        }
        long remaining = Math.max(0, rule.limit() - count);
        long resetAfter = 0;
        long next = 0;
        long wait = 0;
        if (count > 0) {
            List<Long> expiries = new ArrayList<>();
            for (Lease lease : leases) {
                if (lease.expires() > now) {
                    expiries.add(lease.expires());
                }
            }
            expiries.sort(null);
            resetAfter = expiries.get(expiries.size() - 1) - now;
            // The next lease to time out frees a slot (the (count + c - limit)-th soonest, for c).
            next = expiries.get((int) (count + remaining + 1 - rule.limit()) - 1) - now;
            if (remaining > 0) {
                // Leases taken now time out sooner than older ones after an edit that shortened
                // the timeout: one more fits when the first of those goes.
                next = Math.min(next, timeout);
            }
            if (count + cost > rule.limit()) {
                wait = expiries.get((int) (count + cost - rule.limit()) - 1) - now;
            }
        }
        return new Verdicts.Answer(allowed, remaining, resetAfter, next, wait, Undo.of(consume, call, 0));
    }

    @Override
    public boolean refund(long now, Rule rule, long cost, Verdicts.Answer taken) {
        Undo undo = taken.undo();
        long call = undo.where();
        long firstSeq = undo.which();
        long timeout = rule.window().toMillis();
        long before = live(now);
        leases.removeIf(lease -> lease.call() == call && lease.timeout() == timeout
                && lease.seq() >= firstSeq && lease.seq() < firstSeq + cost);
        return live(now) < before;
    }

    private long live(long now) {
        long count = 0;
        for (Lease lease : leases) {
            if (lease.expires() > now) {
                count++;
            }
        }
        return count;
    }

    /** When the last lease times out. */
    @Override
    public long expiresAt() {
        long last = Long.MIN_VALUE;
        for (Lease lease : leases) {
            last = Math.max(last, lease.expires());
        }
        return last;
    }
}
