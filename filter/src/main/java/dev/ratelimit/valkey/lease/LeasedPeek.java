package dev.ratelimit.valkey.lease;

import dev.ratelimit.Claim;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** What a peek says with local leases: the store's answer plus the units this limiter holds. */
public final class LeasedPeek {

    private LeasedPeek() {
    }

    /**
     * The peek of a request this limiter's leases would serve whole, without the store (which
     * could not be asked): each claim allowed, with what its lease holds as what remains (at least
     * that much does).
     *
     * @return the answers, or empty when a claim's lease does not hold its whole cost
     */
    public static Optional<List<Verdicts.Answer>> servedWhole(Leases leases, List<Claim> claims) {
        List<Verdicts.Answer> served = new ArrayList<>(claims.size());
        for (Claim claim : claims) {
            long units = held(leases, claim);
            if (units < claim.cost()) {
                return Optional.empty();
            }
            served.add(new Verdicts.Answer(true, units, 0, 0, 0));
        }
        return Optional.of(served);
    }

    /**
     * A peek's answers with the units this limiter holds for each key added: the request they
     * would serve is allowed here, without a call.
     */
    public static List<Verdicts.Answer> withHeld(Leases leases, List<Claim> claims, List<Verdicts.Answer> answers) {
        if (!leases.enabled()) {
            return answers;
        }
        List<Verdicts.Answer> held = new ArrayList<>(answers.size());
        for (int i = 0; i < answers.size(); i++) {
            Claim claim = claims.get(i);
            Verdicts.Answer answer = answers.get(i);
            long units = held(leases, claim);
            if (units == 0) {
                held.add(answer);
            } else {
                boolean allowed = answer.allowed() || units >= claim.cost();
                held.add(new Verdicts.Answer(allowed, answer.remaining() + units, answer.resetMillis(),
                        answer.nextMillis(), allowed ? 0 : answer.waitMillis()));
            }
        }
        return held;
    }

    /** The units this limiter's leases hold for the claim's rule and key: 0 for a rule that does not lease. */
    private static long held(Leases leases, Claim claim) {
        return leases.policy(claim) == null ? 0 : leases.held(claim.rule(), claim.key());
    }
}
