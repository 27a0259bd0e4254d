package dev.ratelimit.valkey;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Leases that no longer serve, until what they did not use goes back to the store (see
 * {@link Lease}): at the next sweep, in one refund call for all of them. A give-back Valkey
 * cannot take is dropped, as refunds are: the units stay counted until their window ends or the
 * bucket refills, never granted twice.
 */
final class LeaseReturns {

    private static final System.Logger LOG = System.getLogger(ValkeyRateLimiter.class.getName());

    /** Gives units back to the store: one refund call for all of them (one per slot group). */
    @FunctionalInterface
    interface GiveBack {
        void giveBack(List<Claim> claims, List<Verdicts.Answer> answers);
    }

    private final GiveBack store;
    private final ConcurrentLinkedQueue<Lease> ended = new ConcurrentLinkedQueue<>();

    LeaseReturns(GiveBack store) {
        this.store = store;
    }

    /** A lease that stopped serving: no one takes from it any more. */
    void ended(Lease lease) {
        ended.add(lease);
    }

    /** Gives back what the ended leases did not use, at {@code now}. */
    void due(long now) {
        all(List.of(), now);
    }

    /** Gives back what every ended lease and the given ones hold, due or not (the limiter closes). */
    void all(List<Lease> live, long now) {
        List<Lease> all = new ArrayList<>(live);
        for (Lease lease; (lease = ended.poll()) != null; ) {
            all.add(lease);
        }
        giveBack(all, now);
    }

    private void giveBack(List<Lease> leases, long now) {
        List<Claim> claims = new ArrayList<>();
        List<Verdicts.Answer> answers = new ArrayList<>();
        for (Lease lease : leases) {
            // A fixed window's lease whose window has ended has nothing left to give back to; one
            // cut to its window and closed before it ended still has (the window counts them).
            boolean windowEnded = lease.take.rule().algorithm() == Algorithm.FIXED_WINDOW
                    && now >= lease.start + lease.answer.resetMillis();
            if (lease.owesBack() && !windowEnded) {
                claims.add(lease.giveBack());
                answers.add(lease.answer);
            }
        }
        if (claims.isEmpty()) {
            return;
        }
        try {
            store.giveBack(claims, answers);
        } catch (RateLimitException e) {
            LOG.log(System.Logger.Level.DEBUG, "unused leased units not given back: {0}", e.getMessage());
        }
    }
}
