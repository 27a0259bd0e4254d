package dev.ratelimit.it.checker;

import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A history written by hand for the invariants' own tests: one rule, one instance, store calls recorded. */
final class HandHistory {

    private HandHistory() {
    }

    /**
     * The start, the rule, then the events.
     *
     * @param at             the client clock of the start
     * @param breakerOpenMs  the breaker's open period the run declares
     * @param rule           the one rule
     * @param events         what happened
     * @return the history
     */
    static List<Event> of(long at, long breakerOpenMs, Rule rule, List<Event> events) {
        List<Event> history = new ArrayList<>();
        history.add(new Event.Start(0, at, 0, 0, "hand", Map.of("storeEvents", true, "wires", true,
                "breakerOpenMs", breakerOpenMs, "instances", 1)));
        history.add(new Event.RuleSet(0, at, 0, rule, null, null, "initial"));
        history.addAll(events);
        return history;
    }
}
