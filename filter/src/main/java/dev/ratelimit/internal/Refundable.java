package dev.ratelimit.internal;

import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

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

    private final Decisions decisions;
    private final Refund refund;
    private final AtomicBoolean settled = new AtomicBoolean();

    private Refundable(Decisions decisions, Refund refund) {
        this.decisions = Objects.requireNonNull(decisions, "decisions");
        this.refund = Objects.requireNonNull(refund, "refund");
    }

    /**
     * A reservation whose units {@code refund} can give back.
     *
     * @param decisions the decisions of the acquiring call
     * @param refund    what gives the units back
     * @return the reservation
     */
    public static Reservation of(Decisions decisions, Refund refund) {
        return new Refundable(decisions, refund);
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
