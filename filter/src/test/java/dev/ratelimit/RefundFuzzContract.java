package dev.ratelimit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.fail;

/**
 * A refund gives back only units that are still the reservation's, checked differentially: key
 * {@code a} holds a reservation that key {@code b} never had, and both then see the same random
 * steps (time, acquires, resets, edits of the rule's limit, window and burst, other
 * reservations taken and settled). Once the reservation is settled, {@code a} may never be
 * freer than the key would be had the units given back never been taken: a reference limiter
 * (the in-process one, on a clock of its own) replays every step that still counts (the
 * acquires, resets, and the reservations not given back) and {@code a} is compared with it at
 * each step until the rule is first edited (a write under an edited rule trims the state to the
 * new rule's shape, which a reservation given back leaves done, so there is no such reference). A refund that gave back units taken since (after a reset, an edit, an
 * expiry), or refill a bucket without them would have lost, would leave {@code a} more room.
 * For the windowed algorithms and the concurrency limit, whose refunds charge nothing of
 * refill, {@code a} is also never freer than {@code b}. Runs that take a request on one key
 * and not the other, before the settle, are dropped (the keys no longer saw the same steps);
 * one that allows {@code a} where {@code b} is rejected is a failure.
 */
public abstract class RefundFuzzContract extends ManualClockLimiterTest {

    /** Aligned to every window drawn, so offsets read as window phases. */
    protected static final long T0 = 1_700_000_040_000L;
    private static final long[] WINDOWS = {1_000, 2_000, 5_000, 10_000, 60_000};

    @Override
    protected long startMillis() {
        return T0;
    }

    /**
     * How many random runs per algorithm.
     *
     * @return the number of seeds
     */
    protected abstract int seeds();

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aSettledReservationNeverLeavesItsKeyFreerThanAKeyThatNeverHadIt(Algorithm algorithm) {
        int kept = 0;
        for (int seed = 0; seed < seeds(); seed++) {
            List<String> steps = new ArrayList<>();
            String failure = run(algorithm, seed, steps);
            if (failure == null) {
                continue;
            }
            if (failure.isEmpty()) {
                kept++;
                continue;
            }
            fail(algorithm + " seed " + seed + ": " + failure + "\nsteps:\n  " + String.join("\n  ", steps));
        }
        if (kept < seeds() / 4) {
            fail(algorithm + ": only " + kept + " of " + seeds() + " runs kept both keys on the same steps");
        }
    }

    private static Rule rule(Random random, Algorithm algorithm, String name) {
        long window = WINDOWS[random.nextInt(WINDOWS.length)];
        long limit = 2 + random.nextInt(12);
        long burst = algorithm.hasBurst() ? limit + random.nextInt(6) - 2 : limit;
        return Rule.builder(name, algorithm).limit(limit).window(Duration.ofMillis(window)).burst(Math.max(1, burst)).build();
    }

    /** One step the reference replays: at a time, under a rule, an acquire of units, or a reset. */
    private record Step(long at, Rule rule, long cost, boolean reset) {
    }

    /** null: a failure-free run dropped; "": a run kept and passed; else the failure. */
    private String run(Algorithm algorithm, int seed, List<String> steps) {
        Random random = new Random(seed * 7919L + algorithm.ordinal());
        String name = "fz" + seed;
        Rule rule = rule(random, algorithm, name);
        clock.advance(1 + random.nextInt(3_000));
        long cost = 1 + random.nextInt((int) Math.min(3, rule.capacity()));
        Reservation mine = limiter.reserve(rule, "a", cost);
        steps.add("t=" + (clock.getAsLong() - T0) + " reserve a cost " + cost + " " + rule + " -> " + mine.allowed());
        if (!mine.allowed()) {
            return null;
        }
        // What still counts on key a, but for mine: acquires, resets, other reservations not given back.
        List<Step> counted = new ArrayList<>();
        boolean edited = false;
        boolean settled = false;
        List<Reservation[]> others = new ArrayList<>();
        List<Step> othersSteps = new ArrayList<>();
        int n = 4 + random.nextInt(14);
        for (int i = 0; i < n; i++) {
            String step;
            switch (random.nextInt(9)) {
                case 0, 1 -> {
                    long by = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt((int) rule.window().toMillis() * 3 / 2);
                    clock.advance(by);
                    step = "advance " + by;
                }
                case 2, 3 -> {
                    long c = 1 + random.nextInt((int) Math.min(3, rule.capacity()));
                    boolean a = limiter.acquire(rule, "a", c).allowed();
                    boolean b = limiter.acquire(rule, "b", c).allowed();
                    steps.add("t=" + (clock.getAsLong() - T0) + " acquire cost " + c + " a=" + a + " b=" + b);
                    if (a && !b) {
                        return "a allowed where b was rejected";
                    }
                    if (a != b) {
                        return null;
                    }
                    if (a) {
                        counted.add(new Step(clock.getAsLong(), rule, c, false));
                    }
                    continue;
                }
                case 4 -> {
                    limiter.reset(rule, "a");
                    limiter.reset(rule, "b");
                    counted.add(new Step(clock.getAsLong(), rule, 0, true));
                    step = "reset both";
                }
                case 5 -> {
                    rule = rule(random, algorithm, name);
                    edited = true;
                    step = "edit " + rule;
                }
                case 6 -> {
                    long c = 1 + random.nextInt((int) Math.min(3, rule.capacity()));
                    Reservation a = limiter.reserve(rule, "a", c);
                    Reservation b = limiter.reserve(rule, "b", c);
                    steps.add("t=" + (clock.getAsLong() - T0) + " other reservation cost " + c + " a=" + a.allowed()
                            + " b=" + b.allowed());
                    if (a.allowed() && !b.allowed()) {
                        return "a allowed where b was rejected";
                    }
                    if (a.allowed() != b.allowed()) {
                        return null;
                    }
                    if (a.allowed()) {
                        others.add(new Reservation[] {a, b});
                        Step taken = new Step(clock.getAsLong(), rule, c, false);
                        othersSteps.add(taken);
                        counted.add(taken);
                    }
                    continue;
                }
                case 7 -> {
                    if (others.isEmpty()) {
                        continue;
                    }
                    int which = random.nextInt(others.size());
                    Reservation[] pair = others.remove(which);
                    Step taken = othersSteps.remove(which);
                    List<String> givenA = pair[0].cancel();
                    step = "other settled: a gave back " + givenA + ", b " + pair[1].cancel();
                    if (!givenA.isEmpty()) {
                        // Given back: as if never taken (a refund that gave nothing leaves it counted).
                        removeSame(counted, taken);
                    }
                }
                default -> {
                    if (settled) {
                        continue;
                    }
                    settled = true;
                    step = "settle mine: gave back " + mine.cancel();
                }
            }
            steps.add("t=" + (clock.getAsLong() - T0) + " " + step);
            if (settled) {
                String failure = compare(rule, edited ? null : counted);
                if (failure != null) {
                    return failure;
                }
            }
        }
        if (!settled) {
            steps.add("t=" + (clock.getAsLong() - T0) + " settle mine: gave back " + mine.cancel());
        }
        for (int i = 0; i < others.size(); i++) {
            Reservation[] pair = others.get(i);
            List<String> givenA = pair[0].cancel();
            steps.add("t=" + (clock.getAsLong() - T0) + " other settled: a gave back " + givenA + ", b " + pair[1].cancel());
            if (!givenA.isEmpty()) {
                removeSame(counted, othersSteps.get(i));
            }
        }
        String failure = compare(rule, edited ? null : counted);
        return failure == null ? "" : failure;
    }

    /**
     * a no freer than the reference (when there is one: {@code counted} null after an edit), at
     * every cost; for algorithms whose refunds charge no refill, nor than b.
     */
    private String compare(Rule rule, List<Step> counted) {
        RateLimiter reference = counted == null ? null : replay(counted);
        for (long c = 1; c <= Math.min(rule.capacity(), 6); c++) {
            Decision a = limiter.peek(rule, "a", c);
            String failure = reference == null ? null : noFreer(a, reference.peek(rule, "a", c), "c, the reference");
            if (failure == null && !rule.algorithm().hasBurst()) {
                failure = noFreer(a, limiter.peek(rule, "b", c), "b");
            }
            if (failure != null) {
                return "cost " + c + ": " + failure;
            }
        }
        return null;
    }

    private static String noFreer(Decision a, Decision other, String name) {
        if (a.allowed() && !other.allowed()) {
            return "a " + a + " allowed where " + name + " " + other + " is rejected";
        }
        if (a.remaining() > other.remaining()) {
            return "a " + a + " has more left than " + name + " " + other;
        }
        if (!a.allowed() && a.retryAfter().compareTo(other.retryAfter()) < 0) {
            return "a " + a + " may retry sooner than " + name + " " + other;
        }
        return null;
    }

    /** Removes that very step (an acquire at the same time and cost is another). */
    private static void removeSame(List<Step> steps, Step step) {
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) == step) {
                steps.remove(i);
                return;
            }
        }
    }

    /** The in-process limiter on a clock of its own, after the steps that still count, now. */
    private RateLimiter replay(List<Step> counted) {
        ManualClock at = new ManualClock(T0);
        RateLimiter reference = dev.ratelimit.local.LocalRateLimiter.withClock(at, 10);
        for (Step step : counted) {
            at.set(step.at());
            if (step.reset()) {
                reference.reset(step.rule(), "a");
            } else {
                reference.acquire(step.rule(), "a", step.cost());
            }
        }
        at.set(clock.getAsLong());
        return reference;
    }
}
