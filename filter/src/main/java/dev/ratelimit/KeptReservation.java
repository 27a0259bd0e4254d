package dev.ratelimit;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

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
