package dev.ratelimit.internal;

import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The limiters' {@link Reservation}: units a limiter took, given back at most once by what took
 * them. The first {@code commit} or {@code cancel} settles it; either way a concurrency rule's
 * permits go back, since the work is over.
 */
public final class Refundable implements Reservation {

    /** Gives back the units a limiter took; called at most once per reservation. */
    @FunctionalInterface
    public interface Refund {
        /**
         * Gives back the units taken for the rules that {@code rules} accepts.
         *
         * @param rules which of the reservation's rules to give back
         * @return the names of the rules that gave units back (a rule whose state has expired,
         *         rolled over or been reset has nothing to give back)
         */
        List<String> giveBack(Predicate<Rule> rules);
    }

    /** Settles a reservation by the work's actual costs; called at most once per reservation. */
    @FunctionalInterface
    public interface Adjust {
        /**
         * Keeps the units, giving back what a rule's actual cost leaves unused and charging what
         * it passes (see {@link Reservation#commit(ToLongFunction)}); releases the permits of
         * concurrency rules as a commit does.
         *
         * @param actualCost each rule's actual cost; negative: as reserved
         * @return what was charged beyond the reservation, and what could not be
         */
        Charged settle(ToLongFunction<Rule> actualCost);
    }

    /**
     * What a settlement by actual costs charged beyond the reservation.
     *
     * @param charged       the names of the rules charged in full
     * @param dropped       the names of the rules whose charge was dropped in part (their key's
     *                      debt at its bound)
     * @param given         the names of the rules that gave back what their cost left unused
     * @param refundDropped the names of the rules whose unused units the store could not take
     *                      back (they stay counted), after their charges were made
     */
    public record Charged(List<String> charged, List<String> dropped, List<String> given, List<String> refundDropped) {
        /** Nothing charged. */
        public static final Charged NONE = new Charged(List.of(), List.of(), List.of(), List.of());

        /** Copies the lists. */
        public Charged {
            charged = List.copyOf(charged);
            dropped = List.copyOf(dropped);
            given = List.copyOf(given);
            refundDropped = List.copyOf(refundDropped);
        }
    }

    private final Decisions decisions;
    private final Refund refund;
    private final Adjust adjust;
    private final QueuePlace place;
    private final AtomicBoolean settled = new AtomicBoolean();

    private Refundable(Decisions decisions, Refund refund, Adjust adjust, QueuePlace place) {
        this.decisions = Objects.requireNonNull(decisions, "decisions");
        this.refund = Objects.requireNonNull(refund, "refund");
        this.adjust = Objects.requireNonNull(adjust, "adjust");
        this.place = place;
    }

    /**
     * A reservation whose units {@code refund} can give back and {@code adjust} can settle by
     * the work's actual costs.
     *
     * @param decisions the decisions of the acquiring call
     * @param refund    what gives the units back
     * @param adjust    what settles them by actual costs
     * @return the reservation
     */
    public static Reservation of(Decisions decisions, Refund refund, Adjust adjust) {
        return new Refundable(decisions, refund, adjust, null);
    }

    /**
     * The same, for a request that may be held for a slot to come: where its take stands in its
     * key's queue, by which requests given back together go the last first.
     *
     * @param decisions the decisions of the acquiring call
     * @param refund    what gives the units back
     * @param adjust    what settles them by actual costs
     * @param place     where the held claim's take stands in its key's queue; null when none was held
     * @return the reservation
     */
    public static Reservation of(Decisions decisions, Refund refund, Adjust adjust, QueuePlace place) {
        return new Refundable(decisions, refund, adjust, place);
    }

    /**
     * Where a reservation's held claim stands in its key's queue.
     *
     * @param reservation any reservation
     * @return the place, or null when it is not one of the limiters' or none of its claims was held
     */
    public static QueuePlace placeOf(Reservation reservation) {
        return reservation instanceof Refundable refundable ? refundable.place : null;
    }

    @Override
    public Decisions decisions() {
        return decisions;
    }

    @Override
    public boolean commit() {
        if (!settled.compareAndSet(false, true)) {
            return false;
        }
        // Nothing is sent when no claim is a concurrency rule's.
        refund.giveBack(rule -> rule.algorithm().isConcurrency());
        return true;
    }

    @Override
    public boolean commit(ToLongFunction<Rule> actualCost) {
        return settle(actualCost) != null;
    }

    /**
     * {@link #commit(ToLongFunction)}, telling what was charged.
     *
     * @param actualCost each rule's actual cost; negative: as reserved
     * @return what was charged, or null if the reservation was settled already
     */
    public Charged settle(ToLongFunction<Rule> actualCost) {
        Objects.requireNonNull(actualCost, "actualCost");
        if (!settled.compareAndSet(false, true)) {
            return null;
        }
        return adjust.settle(actualCost);
    }

    @Override
    public List<String> cancel(Predicate<Rule> rules) {
        Objects.requireNonNull(rules, "rules");
        if (!settled.compareAndSet(false, true)) {
            return List.of();
        }
        return refund.giveBack(rule -> rule.algorithm().isConcurrency() || rules.test(rule));
    }

    @Override
    public String toString() {
        return "Reservation[" + decisions + (settled.get() ? ", settled]" : "]");
    }
}
