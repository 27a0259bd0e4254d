package dev.ratelimit.it.checker;

import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Draws a workload's steps one by one from its random stream, remembering which keys are
 * planted: calls, settlements, peeks, clock moves, edits and resets, and on Valkey the faults.
 */
final class Generator {
    private final Random random;
    private final List<Rule> rules;
    private final boolean valkey;
    /** A single Valkey (not a cluster): it can be restarted, and its client made to throw. */
    private final boolean single;
    private final List<Op.Plant> planted = new ArrayList<>();

    /** Draws whether a fixed window's edit makes it a calendar window, or null for never. */
    private final Random calendars;
    /** Whether edits draw the server clock's short windows. */
    private final boolean serverClock;

    Generator(Random random, List<Rule> rules, boolean valkey, boolean single) {
        this(random, rules, valkey, single, null, false);
    }

    /**
     * A generator whose fixed-window edits may also make or keep a calendar window, drawn from
     * {@code calendars} (a stream of its own: the steps drawn from {@code random} stay as they were).
     */
    Generator(Random random, List<Rule> rules, boolean valkey, boolean single, Random calendars, boolean serverClock) {
        this.random = random;
        this.rules = rules;
        this.valkey = valkey;
        this.single = single;
        this.calendars = calendars;
        this.serverClock = serverClock;
    }

    Op next() {
        if (!planted.isEmpty() && random.nextInt(25) == 0) {
            Op.Plant plant = planted.remove(random.nextInt(planted.size()));
            return new Op.Unplant(plant.rule(), plant.key());
        }
        int roll = random.nextInt(1000);
        if (valkey && roll < 2) {
            return stall();
        }
        if (valkey && roll < 8) {
            return new Op.Flush();
        }
        if (valkey && roll < 16 && planted.size() < 2) {
            Op.Plant plant = new Op.Plant(random.nextInt(rules.size()), Workload.KEYS.get(random.nextInt(Workload.KEYS.size())));
            planted.add(plant);
            return plant;
        }
        if (single && roll >= 16 && roll < 17) {
            return new Op.Restart();
        }
        if (single && roll >= 17 && roll < 19) {
            return new Op.ClientErrors(1 + random.nextInt(2));
        }
        if (roll < 36) {
            return edit();
        }
        if (roll < 40) {
            // Half the resets on Valkey are an operator's (no draw of their own: the seeds'
            // other steps stay as they were).
            return valkey && roll % 2 == 1 ? new Op.OperatorReset(claim()) : new Op.Reset(claim());
        }
        if (roll < 70) {
            return new Op.Retry();
        }
        if (roll < 320) {
            return advance();
        }
        if (roll < 400) {
            return valkey && roll % 8 == 0 ? new Op.Inspect(claim()) : new Op.Peek(claim());
        }
        if (roll < 540) {
            return settle();
        }
        return take();
    }

    /**
     * A stall: calls sent into it, most of them on one concurrency rule and key when there
     * is one (their leases are lost with the replies), then probes of that rule and key,
     * paced so the limiter has its chances to release them, the last of which needs them
     * released.
     */
    private Op stall() {
        List<Integer> leases = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            if (rules.get(i).algorithm().isConcurrency()) {
                leases.add(i);
            }
        }
        Op.ClaimSpec lease = leases.isEmpty() ? null
                : new Op.ClaimSpec(leases.get(random.nextInt(leases.size())), Workload.KEYS.get(random.nextInt(Workload.KEYS.size())), 1);
        List<Op> during = new ArrayList<>();
        int count = 3 + random.nextInt(4);
        while (during.size() < count) {
            Op op = switch (random.nextInt(4)) {
                case 0 -> settle();
                case 1 -> new Op.Peek(claim());
                default -> take();
            };
            if (lease != null && op instanceof Op.Take take && random.nextInt(4) > 0) {
                List<Op.ClaimSpec> claims = new ArrayList<>(take.claims());
                claims.removeIf(c -> c.rule() == lease.rule());
                claims.add(0, lease);
                op = new Op.Take(take.reserve(), claims);
            }
            during.add(op);
        }
        List<Op> after = new ArrayList<>();
        for (int i = 0; lease != null && i < 5; i++) {
            // On a cluster the probes ask for every lease: one orphaned by a slot group
            // whose partner failed shows even under a limit above 1.
            after.add(new Op.Probe(valkey && !single ? new Op.ClaimSpec(lease.rule(), lease.key(), 0) : lease));
        }
        return new Op.Stall(300, during, after);
    }

    /**
     * A failover under Sentinel: a few calls, peeks and settlements to send while it happens
     * (the runner sends them again and again until the new primary is named), and what each
     * instance peeks at until it reaches the new primary.
     */
    Op failover() {
        List<Op> during = new ArrayList<>();
        int count = 3 + random.nextInt(4);
        while (during.size() < count) {
            during.add(switch (random.nextInt(4)) {
                case 0 -> settle();
                case 1 -> new Op.Peek(claim());
                default -> take();
            });
        }
        return new Op.Failover(during, new Op.ClaimSpec(random.nextInt(rules.size()),
                Workload.KEYS.get(random.nextInt(Workload.KEYS.size())), 1));
    }

    /**
     * At the start, on a breaker that has seen no call yet: connections reset for ten calls
     * (enough to open it: five in a row, half of at least ten in the last second), then
     * maybe Errors for the probes that follow its open period.
     */
    Op burst() {
        List<Op> during = new ArrayList<>();
        while (during.size() < 12) {
            during.add(random.nextInt(4) == 0 ? new Op.Peek(claim()) : take());
        }
        return new Op.Burst(10, random.nextInt(3), during);
    }

    /**
     * At the start: the server stalls while several threads peek at once, so that the
     * breaker opens with calls still out and its probes meet them.
     */
    Op crowd() {
        List<Op.ClaimSpec> peeks = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            peeks.add(claim());
        }
        return new Op.Crowd(300, 6, peeks);
    }

    private Op take() {
        return new Op.Take(random.nextInt(5) < 2, claims());
    }

    private Op settle() {
        String how = switch (random.nextInt(4)) {
            case 0 -> "commit";
            case 1 -> "cancel-one";
            default -> "cancel";
        };
        return new Op.Settle(random.nextBoolean() ? -1 : random.nextInt(1_000), how, random.nextInt(rules.size()));
    }

    private Op advance() {
        int rule = random.nextInt(rules.size());
        return switch (random.nextInt(20)) {
            case 0, 1 -> new Op.Advance("zero", 0, rule);
            case 2, 3, 4 -> new Op.Advance("one", 0, rule);
            case 5, 6, 7, 8, 9, 10 -> new Op.Advance("fraction", random.nextDouble(), rule);
            case 11, 12, 13 -> new Op.Advance("windows", 1 + random.nextInt(3), rule);
            case 14, 15, 16 -> new Op.Advance("retry", 0, rule);
            default -> new Op.Advance("retry-early", 0, rule);
        };
    }

    private Op edit() {
        int index = random.nextInt(rules.size());
        Rule edited = Workload.rule(random, "r" + index, rules.get(index).algorithm(), serverClock);
        // In a run with a calendar window, a fixed window's edit is to a calendar window one time in
        // two: edits both ways between rolling and calendar windows, and between calendars.
        String calendar = calendars != null && edited.algorithm() == dev.ratelimit.Algorithm.FIXED_WINDOW
                && rules.stream().anyMatch(r -> r.calendar() != null) && calendars.nextBoolean()
                ? Calendars.text(Calendars.draw(calendars)) : null;
        return new Op.Edit(index, edited.limit(), edited.window().toMillis(), edited.burst(), calendar);
    }

    private List<Op.ClaimSpec> claims() {
        List<Integer> indexes = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            indexes.add(i);
        }
        Collections.shuffle(indexes, random);
        int count = 1 + random.nextInt(Math.min(3, rules.size()));
        String key = Workload.KEYS.get(random.nextInt(Workload.KEYS.size()));
        List<Op.ClaimSpec> claims = new ArrayList<>(count);
        for (int i : indexes.subList(0, count)) {
            // Mostly one key per request, as one caller's rules; sometimes each its own.
            String claimKey = random.nextInt(4) == 0 ? Workload.KEYS.get(random.nextInt(Workload.KEYS.size())) : key;
            claims.add(new Op.ClaimSpec(i, claimKey, cost()));
        }
        return claims;
    }

    private Op.ClaimSpec claim() {
        return new Op.ClaimSpec(random.nextInt(rules.size()), Workload.KEYS.get(random.nextInt(Workload.KEYS.size())), cost());
    }

    private long cost() {
        int roll = random.nextInt(20);
        if (roll < 12) {
            return 1;
        }
        if (roll < 17) {
            return 2 + random.nextInt(2);
        }
        return 0;
    }
}
