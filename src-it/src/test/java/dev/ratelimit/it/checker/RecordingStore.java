package dev.ratelimit.it.checker;

import dev.ratelimit.internal.Refundable;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;

import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The shared store as the resilient layer sees it, every call and refund recorded as it
 * happens: what was asked, and the answer or the error. This is how the history tells a claim
 * the store may have counted (a call that timed out, whose reply was lost) from one it never
 * saw (the deny cache, an open breaker inside the store still counts as a call that threw), and
 * a refund that may have reached the store from one that did.
 */
final class RecordingStore implements RateLimiter {

    private final RateLimiter store;
    private final History history;
    private final LongSupplier op;
    private final LongSupplier clock;
    private final int instance;
    /**
     * The last operation whose call this store answered (any kind, an unreadable state
     * included), 0 before the first.
     */
    private volatile long lastAnswered;

    /**
     * Records the calls to {@code store}.
     *
     * @param store    the limiter that decides
     * @param history  where the events go
     * @param op       the operation being run (the events' op)
     * @param clock    the client clock (the events' at)
     * @param instance which limiter instance this store belongs to
     */
    RecordingStore(RateLimiter store, History history, LongSupplier op, LongSupplier clock, int instance) {
        this.store = store;
        this.history = history;
        this.op = op;
        this.clock = clock;
        this.instance = instance;
    }

    // Errors are recorded too: whatever the store throws, the history must say the call was
    // made and may have run; the invariants judge whether it should have thrown it.

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        long began = history.real();
        try {
            Decisions answer = store.acquireAll(claims);
            record("acquire", claims, answer, null, began);
            return answer;
        } catch (RuntimeException | Error e) {
            record("acquire", claims, null, e, began);
            throw e;
        }
    }

    @Override
    public Reservation reserveAll(List<Claim> claims) {
        Reservation reservation;
        long began = history.real();
        try {
            reservation = store.reserveAll(claims);
        } catch (RuntimeException | Error e) {
            record("reserve", claims, null, e, began);
            throw e;
        }
        record("reserve", claims, reservation.decisions(), null, began);
        if (!reservation.allowed()) {
            return reservation; // nothing to give back
        }
        long reservedBy = op.getAsLong();
        // The reservation as the caller gets it, its refunds recorded. Reservation.cancel asks
        // the inner one with the same predicate it was given, so the rules asked are the same.
        return Refundable.of(reservation.decisions(), which -> giveBack(reservation, claims, which, reservedBy),
                actual -> settle(reservation, claims, actual, reservedBy));
    }

    /** A settlement by actual costs, recorded: what the store's reservation charged and gave back, or what it threw. */
    private Refundable.Charged settle(Reservation reservation, List<Claim> claims, java.util.function.ToLongFunction<Rule> actual,
                                      long reservedBy) {
        long cost = claims.isEmpty() ? -1 : actual.applyAsLong(claims.get(0).rule());
        long began = clock.getAsLong();
        try {
            Refundable.Charged charged = ((Refundable) reservation).settle(actual);
            if (charged == null) {
                charged = Refundable.Charged.NONE;
            }
            history.add(new Event.StoreCharge(op.getAsLong(), clock.getAsLong(), history.real(), reservedBy, cost,
                    charged.charged(), charged.dropped(), charged.given(), charged.refundDropped(), null, began, instance));
            return charged;
        } catch (RuntimeException | Error e) {
            history.add(new Event.StoreCharge(op.getAsLong(), clock.getAsLong(), history.real(), reservedBy, cost,
                    List.of(), List.of(), List.of(), List.of(), describe(e), began, instance));
            throw e;
        }
    }

    private List<String> giveBack(Reservation reservation, List<Claim> claims, Predicate<Rule> which, long reservedBy) {
        List<String> asked = claims.stream().map(Claim::rule).filter(which).map(Rule::name).toList();
        if (asked.isEmpty()) {
            return reservation.cancel(which); // sends nothing
        }
        try {
            List<String> given = reservation.cancel(which);
            history.add(new Event.StoreRefund(op.getAsLong(), clock.getAsLong(), history.real(), reservedBy, asked,
                    given, null, instance));
            return given;
        } catch (RuntimeException | Error e) {
            history.add(new Event.StoreRefund(op.getAsLong(), clock.getAsLong(), history.real(), reservedBy, asked,
                    null, describe(e), instance));
            throw e;
        }
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        List<Claim> claims = List.of(Claim.of(rule, key, cost));
        long began = history.real();
        try {
            Decision decision = store.peek(rule, key, cost);
            record("peek", claims, Decisions.of(claims, List.of(decision)), null, began);
            return decision;
        } catch (RuntimeException | Error e) {
            record("peek", claims, null, e, began);
            throw e;
        }
    }

    @Override
    public void reset(Rule rule, String key) {
        List<Claim> claims = List.of(Claim.of(rule, key));
        long began = history.real();
        try {
            store.reset(rule, key);
            record("reset", claims, null, null, began);
        } catch (RuntimeException | Error e) {
            record("reset", claims, null, e, began);
            throw e;
        }
    }

    @Override
    public void close() {
        store.close();
    }

    /**
     * The last operation whose call this store answered.
     *
     * @return its number, 0 if none
     */
    long lastAnswered() {
        return lastAnswered;
    }

    private void record(String kind, List<Claim> claims, Decisions answer, Throwable error, long began) {
        if (error == null || error instanceof UnreadableStateException) {
            // An unreadable state is Valkey's answer too: the function ran (a replica refuses
            // to run it at all).
            lastAnswered = op.getAsLong();
        }
        history.add(new Event.StoreCall(op.getAsLong(), clock.getAsLong(), history.real(), kind, claims, answer,
                error == null ? null : describe(error),
                error instanceof UnreadableStateException unreadable ? unreadable.ruleName() : null, began, instance));
    }

    /** An error as the history shows it: its class and message (thrown in a child JVM: its class there). */
    static String describe(Throwable error) {
        String name = error instanceof ChildLimiter.FromChild child ? child.className() : error.getClass().getSimpleName();
        return name + ": " + error.getMessage();
    }
}
