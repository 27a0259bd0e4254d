package dev.ratelimit;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/** {@link Reservation#kept}: settled once, gives nothing back. */
final class KeptReservation implements Reservation {

    private final Decisions decisions;
    private final AtomicBoolean settled = new AtomicBoolean();

    KeptReservation(Decisions decisions) {
        this.decisions = Objects.requireNonNull(decisions, "decisions");
    }

    @Override
    public Decisions decisions() {
        return decisions;
    }

    @Override
    public boolean commit() {
        return settled.compareAndSet(false, true);
    }

    /** Nothing was taken, so nothing is given back or charged. */
    @Override
    public boolean commit(ToLongFunction<Rule> actualCost) {
        Objects.requireNonNull(actualCost, "actualCost");
        return commit();
    }

    @Override
    public List<String> cancel(Predicate<Rule> rules) {
        Objects.requireNonNull(rules, "rules");
        settled.set(true);
        return List.of();
    }

    @Override
    public String toString() {
        return "Reservation[" + decisions + (settled.get() ? ", settled]" : "]");
    }
}
