package dev.ratelimit.resilient;

import dev.ratelimit.internal.Charges;
import dev.ratelimit.internal.QueuePlace;
import dev.ratelimit.internal.Refundable;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * How a request's rules, decided apart, settle into one outcome. The store and the in-process
 * fallback of {@code local} policies each took units in a call of its own: when the request is
 * rejected, the part that allowed gives back what it took (all or nothing, as one store call
 * is) and is described again as it is after that; when it is allowed and reserved, its
 * reservation gives back through both. Giving back to the store never throws: a refund it
 * cannot take is dropped, logged once while it is down and reported.
 */
final class Settlement {

    private final RateLimiter shared;
    private final FailurePolicies policies;
    private final DenyCache denyCache;
    private final StoreHealth health;
    private final RateLimitListener listener;

    /**
     * The settling.
     *
     * @param shared    the store's limiter, asked again after a give-back
     * @param policies  the policies, whose fallback is asked again after a give-back
     * @param denyCache the deny cache, whose rejections of keys given back are forgotten; null when off
     * @param health    told whether the store answered a give-back
     * @param listener  told of refunds given back and dropped
     */
    Settlement(RateLimiter shared, FailurePolicies policies, DenyCache denyCache, StoreHealth health,
             RateLimitListener listener) {
        this.shared = shared;
        this.policies = policies;
        this.denyCache = denyCache;
        this.health = health;
        this.listener = listener;
    }

    /**
     * The request's outcome.
     *
     * @param claims      the request's claims
     * @param result      its decisions, combined
     * @param reserve     whether the caller reserved: only then is anything kept to give back later
     * @param reserved    what the store reserved; null when it acquired only, or was not asked
     * @param storeClaims the claims the store decided, in the order of {@code reserved}
     * @param local       what the fallback reserved; null when it decided nothing
     * @return the reservation: kept (nothing to give back), or giving back to the store and the fallback
     */
    Reservation settle(List<Claim> claims, Decisions result, boolean reserve, Reservation reserved,
                       List<Claim> storeClaims, Reservation local) {
        Reservation store = reserved != null && reserved.allowed() ? reserved : null;
        Reservation fallback = local != null && local.allowed() ? local : null;
        if (!result.allowed()) {
            // All or nothing, as one store call is: rules decided apart (the store, the
            // fallback) that allowed give back what they took when the other rejected; the
            // attempts count-rejected rules recorded stand.
            Predicate<Rule> taken = rule -> !rule.countRejected();
            if (store != null) {
                giveBack(store, storeClaims, taken);
            }
            if (fallback != null) {
                fallback.cancel(taken);
            }
            Decisions settled = result;
            if (store != null || fallback != null) {
                settled = Redescription.afterSplitRejection(claims, result, store != null, fallback != null,
                        (claim, byFallback) -> byFallback ? policies.peek(claim.rule(), claim.key(), claim.cost())
                                : shared.peek(claim.rule(), claim.key(), claim.cost()));
            }
            return Reservation.kept(settled);
        }
        if (!reserve) {
            return Reservation.kept(result);
        }
        if (store == null && fallback == null) {
            // Nothing was counted (an open policy let it through): its work is charged to the
            // store once its cost is known, if the store answers again.
            return Refundable.of(result, which -> List.of(), actual -> {
                chargeUncounted(claims, result, actual);
                return Refundable.Charged.NONE;
            });
        }
        // The held claim's place, whichever decided it (one rule holds a request).
        QueuePlace storePlace = Refundable.placeOf(store);
        QueuePlace place = storePlace != null ? storePlace : Refundable.placeOf(fallback);
        return Refundable.of(result, which -> {
            List<String> given = new ArrayList<>();
            if (store != null) {
                given.addAll(giveBack(store, storeClaims, which));
            }
            if (fallback != null) {
                // In-process: it cannot fail.
                given.addAll(fallback.cancel(which));
            }
            return given;
        }, actual -> {
            Refundable.Charged byStore = store == null ? Refundable.Charged.NONE : settle(store, storeClaims, actual);
            // In process: it cannot fail.
            Refundable.Charged byFallback = fallback instanceof Refundable inProcess ? inProcess.settle(actual) : null;
            report(byFallback == null ? Refundable.Charged.NONE : byFallback);
            chargeUncounted(claims, result, actual);
            return byStore;
        }, place);
    }

    /**
     * The rules of a request a failure policy let through (open, or local: the fallback counts
     * there): the store counted nothing of its work, so once the work's cost is known, the store
     * is charged all of it if it answers again, and it is reported ({@code CHARGED}, or
     * {@code CHARGE_DROPPED} when it still cannot take it, or the limiter is not Valkey's).
     */
    private void chargeUncounted(List<Claim> claims, Decisions result, ToLongFunction<Rule> actual) {
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            Decision.Basis basis = result.get(i).basis();
            long cost = actual.applyAsLong(claim.rule());
            if (basis == Decision.Basis.SHARED || cost <= 0 || !Charges.supports(claim.rule().algorithm())) {
                continue;
            }
            boolean whole = false;
            if (shared instanceof ValkeyRateLimiter valkey) {
                try {
                    whole = valkey.charge(claim, cost);
                    health.answered();
                } catch (RuntimeException e) {
                    health.failed(e);
                }
            }
            listener.onEvent(claim.rule().name(), whole ? RateLimitListener.Event.CHARGED
                    : RateLimitListener.Event.CHARGE_DROPPED);
        }
    }

    /**
     * Settles the store's reservation by actual costs (see {@link Reservation#commit(ToLongFunction)});
     * never throws: a charge the store cannot take goes by the rule's failure policy, and what
     * was charged, given back or dropped is reported.
     */
    private Refundable.Charged settle(Reservation store, List<Claim> storeClaims, ToLongFunction<Rule> actual) {
        // Units that a cost left unused may come back: no rejection of these keys holds.
        forgetAll(storeClaims, rule -> true);
        Refundable.Charged settled;
        try {
            if (store instanceof Refundable refundable) {
                settled = refundable.settle(actual);
            } else {
                store.commit(actual); // a limiter of one's own: it says nothing of what it charged
                settled = null;
            }
            if (settled == null) {
                settled = Refundable.Charged.NONE;
            }
            health.answered();
        } catch (RuntimeException e) {
            // The charges failed, so nothing was charged (they go first): they go by their rules'
            // policies. The give-backs were tried after them, and may not have landed.
            health.failed(e);
            for (Claim claim : storeClaims) {
                Charges.Adjustment adjustment = Charges.Adjustment.of(claim, actual.applyAsLong(claim.rule()));
                if (adjustment.kind() == Charges.Adjustment.Kind.CHARGE) {
                    policies.charge(claim, adjustment.units());
                    listener.onEvent(claim.rule().name(), RateLimitListener.Event.CHARGE_DROPPED);
                } else if (adjustment.kind() == Charges.Adjustment.Kind.GIVE_BACK) {
                    listener.onEvent(claim.rule().name(), RateLimitListener.Event.REFUND_DROPPED);
                }
            }
            return Refundable.Charged.NONE;
        } finally {
            forgetAll(storeClaims, rule -> true);
        }
        report(settled);
        return settled;
    }

    /** Tells the listener what a settlement by actual costs did. */
    private void report(Refundable.Charged settled) {
        settled.charged().forEach(rule -> listener.onEvent(rule, RateLimitListener.Event.CHARGED));
        settled.dropped().forEach(rule -> listener.onEvent(rule, RateLimitListener.Event.CHARGE_DROPPED));
        settled.given().forEach(rule -> listener.onEvent(rule, RateLimitListener.Event.REFUNDED));
        settled.refundDropped().forEach(rule -> listener.onEvent(rule, RateLimitListener.Event.REFUND_DROPPED));
    }

    /** Gives units back to the store; what it cannot take is dropped and reported, never thrown. */
    private List<String> giveBack(Reservation store, List<Claim> storeClaims, Predicate<Rule> which) {
        // Room may come back, even when the reply is lost: no rejection of these keys holds.
        forgetAll(storeClaims, which);
        try {
            List<String> given;
            try {
                given = store.cancel(which);
            } finally {
                // And after: a rejection decided on the units before they went back is stale.
                forgetAll(storeClaims, which);
            }
            if (!given.isEmpty()) {
                health.answered();
            }
            for (String rule : given) {
                listener.onEvent(rule, RateLimitListener.Event.REFUNDED);
            }
            return given;
        } catch (RuntimeException e) {
            health.failed(e);
            for (Claim claim : storeClaims) {
                if (which.test(claim.rule())) {
                    listener.onEvent(claim.rule().name(), RateLimitListener.Event.REFUND_DROPPED);
                }
            }
            return List.of();
        }
    }

    private void forgetAll(List<Claim> claims, Predicate<Rule> which) {
        if (denyCache == null) {
            return;
        }
        for (Claim claim : claims) {
            if (which.test(claim.rule())) {
                denyCache.forget(claim.rule().name(), claim.key());
            }
        }
    }
}
