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
 * freer than {@code b}: a refund that gave back units taken since (after a reset, an edit, an
 * expiry) would leave {@code a} more room than a key that never had the reservation. Runs that
 * take a request on one key and not the other, before the settle, are dropped (the keys no
 * longer saw the same steps); one that allows {@code a} where {@code b} is rejected is a failure.
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
        return new Rule(name, algorithm, limit, Duration.ofMillis(window), Math.max(1, burst), false, false);
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
        boolean settled = false;
        List<Reservation[]> others = new ArrayList<>();
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
                    continue;
                }
                case 4 -> {
                    limiter.reset(rule, "a");
                    limiter.reset(rule, "b");
                    step = "reset both";
                }
                case 5 -> {
                    rule = rule(random, algorithm, name);
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
                    }
                    continue;
                }
                case 7 -> {
                    if (others.isEmpty()) {
                        continue;
                    }
                    Reservation[] pair = others.remove(random.nextInt(others.size()));
                    step = "other settled: a gave back " + pair[0].cancel() + ", b " + pair[1].cancel();
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
                String failure = compare(rule);
                if (failure != null) {
                    return failure;
                }
            }
        }
        if (!settled) {
            steps.add("t=" + (clock.getAsLong() - T0) + " settle mine: gave back " + mine.cancel());
        }
        for (Reservation[] pair : others) {
            steps.add("t=" + (clock.getAsLong() - T0) + " other settled: a gave back " + pair[0].cancel() + ", b "
                    + pair[1].cancel());
        }
        String failure = compare(rule);
        return failure == null ? "" : failure;
    }

    /** a no freer than b, at every cost. */
    private String compare(Rule rule) {
        for (long c = 1; c <= Math.min(rule.capacity(), 6); c++) {
            Decision a = limiter.peek(rule, "a", c);
            Decision b = limiter.peek(rule, "b", c);
            if (a.allowed() && !b.allowed()) {
                return "cost " + c + ": a " + a + " allowed where b " + b + " is rejected";
            }
            if (a.remaining() > b.remaining()) {
                return "cost " + c + ": a " + a + " has more left than b " + b;
            }
            if (!a.allowed() && a.retryAfter().compareTo(b.retryAfter()) < 0) {
                return "cost " + c + ": a " + a + " may retry sooner than b " + b;
            }
        }
        return null;
    }
}
