package dev.ratelimit.resilient;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The decisions of a request rejected after its rules were decided apart (some by the store,
 * some by the in-process fallback of their {@code local} policy): the rules that allowed took
 * their units in their own call, and gave them back when the other part rejected (all or
 * nothing, as one store call is), or kept them (a count-rejected rule records the attempt). What
 * they answered before that describes units they no longer hold, or not the wait the rejection
 * charged them, so each is asked again: the numbers of a response must say what the state is.
 */
final class Redescription {

    private Redescription() {
    }

    /** Asks a rule again, read-only: the store, or the fallback of its local policy. */
    @FunctionalInterface
    interface Peek {
        Decision peek(Claim claim, boolean byFallback);
    }

    /**
     * The decisions after the give-back.
     *
     * @param claims       the request's claims
     * @param result       its rejected decisions, before the give-back
     * @param storeTook    whether the store allowed its part and took units
     * @param fallbackTook whether the fallback allowed its part and took units
     * @param peek         how to ask a rule again
     * @return the same verdicts with each such rule's numbers as they are now, and a retry-after
     *         that waits for an enforcing one the rejection left without room for the same request
     */
    static Decisions afterSplitRejection(List<Claim> claims, Decisions result, boolean storeTook,
                                         boolean fallbackTook, Peek peek) {
        List<Decision> decisions = new ArrayList<>(result.all());
        Duration retryAfter = result.retryAfter();
        for (int i = 0; i < claims.size(); i++) {
            Decision was = decisions.get(i);
            boolean byFallback = was.basis() == Decision.Basis.LOCAL;
            boolean took = was.allowed() && (byFallback ? fallbackTook : storeTook && was.basis() == Decision.Basis.SHARED);
            if (!took) {
                continue;
            }
            Decision now;
            try {
                now = peek.peek(claims.get(i), byFallback);
            } catch (RuntimeException e) {
                // Not known: its units may be back, so it announces nothing rather than a stale count.
                decisions.set(i, Verdicts.skipped(was.ruleName(), was.limit()));
                continue;
            }
            // Its verdict on this request stands (it allowed, for the slot it gave, if any); its
            // numbers are the state's now.
            decisions.set(i, Decision.builder(was.ruleName(), now.limit()).remaining(now.remaining())
                    .effectiveWindow(now.effectiveWindow()).resetAfter(now.resetAfter()).delay(was.delay())
                    .basis(was.basis()).build());
            if (!claims.get(i).rule().shadow() && now.retryAfter().compareTo(retryAfter) > 0) {
                retryAfter = now.retryAfter();
            }
        }
        return Decisions.of(false, decisions, retryAfter);
    }
}
