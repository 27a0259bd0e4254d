package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Held requests under client clocks that disagree: one key, a token bucket or GCRA rule that holds requests (maxDelay), calls
 * whose client clock jitters ms around a base time (instances/threads a few ms apart, both
 * ways), reservations given back in random order (often the newest). Valkey and the in-process
 * twin must answer alike; and the key must never be freer than a reference key that replays
 * only what still counts (acquires, reservations not given back, resets) at the same clock
 * readings in the same order.
 */
@ExtendWith(ValkeyExtension.class)
class JitterHeldFuzzTest {

    private static final long T0 = 1_700_000_040_000L;
    private static final int SEEDS = Integer.getInteger("jitter.seeds", 300);
    private static final int STEPS = 40;
    private static final boolean PARITY = Boolean.parseBoolean(System.getProperty("jitter.parity", "true"));

    private final ValkeyServer valkey;

    JitterHeldFuzzTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    /** A take (cost > 0), a clock observation that wrote (cost 0), or a reset. */
    private static final class Step {
        final long at;
        long cost;
        final boolean reset;

        Step(long at, long cost, boolean reset) {
            this.at = at;
            this.cost = cost;
            this.reset = reset;
        }
    }

    private record Pending(Reservation valkey, Reservation twin, Step step, String what) {
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void fuzz(Algorithm algorithm) {
        List<String> failures = new ArrayList<>();
        for (int seed = 0; seed < SEEDS && failures.size() < 5; seed++) {
            String failure = run(algorithm, seed);
            if (failure != null) {
                failures.add("seed " + seed + ": " + failure);
            }
        }
        assertThat(failures).isEmpty();
    }

    private String run(Algorithm algorithm, int seed) {
        Random random = new Random(seed * 31L + algorithm.ordinal());
        long window = new long[] {100, 1_000, 2_000}[random.nextInt(3)];
        long limit = 2 + random.nextInt(9);
        long burst = Math.max(1, limit + random.nextInt(5) - 2);
        long fill = burst * window / limit;
        long maxDelay = Math.max(1, Math.min(7 * fill, 1 + random.nextInt((int) Math.max(1, 3 * fill))));
        Rule rule = Rule.builder("j" + seed, algorithm).limit(limit).window(Duration.ofMillis(window)).burst(burst)
                .maxDelay(Duration.ofMillis(maxDelay)).build();
        int jitter = new int[] {0, 3, 10, 40}[random.nextInt(4)];
        ManualClock clock = new ManualClock(T0);
        long base = T0;
        long seen = Long.MIN_VALUE;
        List<String> trace = new ArrayList<>();
        trace.add(rule + " jitter " + jitter);
        List<Step> counted = new ArrayList<>();
        List<Pending> pending = new ArrayList<>();
        try (ValkeyRateLimiter v = ClientClockLimiters.fresh(valkey, clock);
             LocalRateLimiter twin = LocalRateLimiter.withClock(clock, 100)) {
            for (int i = 0; i < STEPS; i++) {
                int op = random.nextInt(10);
                if (op <= 1) {
                    long by = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt((int) Math.max(2, window / limit * 2));
                    base += by;
                    continue;
                }
                long now = base + (jitter == 0 ? 0 : random.nextInt(2 * jitter + 1) - jitter);
                clock.set(now);
                seen = Math.max(seen, now);
                String t = "t=" + (now - T0) + " ";
                long cost = 1 + random.nextInt((int) Math.min(3, burst));
                if (op <= 3) {
                    Decision a = v.acquire(rule, "a", cost);
                    Decision b = twin.acquire(rule, "a", cost);
                    trace.add(t + "acquire " + cost + " -> " + a);
                    if (PARITY && !a.equals(b)) {
                        return "acquire differs: valkey " + a + " twin " + b + "\n  " + String.join("\n  ", trace);
                    }
                    if (a.allowed()) {
                        counted.add(new Step(now, cost, false));
                    }
                } else if (op <= 6) {
                    Reservation a = v.reserve(rule, "a", cost);
                    Reservation b = twin.reserve(rule, "a", cost);
                    String what = "R" + i + "(cost " + cost + ", delay " + a.decisions().delay().toMillis() + ")";
                    trace.add(t + "reserve " + what + " -> " + a.decisions());
                    if (PARITY && !a.decisions().equals(b.decisions())) {
                        return "reserve differs: valkey " + a.decisions() + " twin " + b.decisions() + "\n  "
                                + String.join("\n  ", trace);
                    }
                    if (a.allowed()) {
                        Step step = new Step(now, cost, false);
                        counted.add(step);
                        pending.add(new Pending(a, b, step, what));
                    }
                } else if (op <= 8) {
                    if (pending.isEmpty()) {
                        continue;
                    }
                    Pending p = pending.remove(random.nextBoolean() ? pending.size() - 1 : random.nextInt(pending.size()));
                    List<String> ga = p.valkey().cancel();
                    List<String> gb = p.twin().cancel();
                    trace.add(t + "cancel " + p.what() + " -> valkey " + ga + " twin " + gb);
                    if (PARITY && !ga.equals(gb)) {
                        return "cancel differs\n  " + String.join("\n  ", trace);
                    }
                    if (!ga.isEmpty()) {
                        // Never taken; but the give-back wrote the key at its time, as the take did.
                        p.step().cost = 0;
                        counted.add(new Step(now, 0, false));
                    }
                } else {
                    if (random.nextInt(3) != 0) {
                        continue;
                    }
                    v.reset(rule, "a");
                    twin.reset(rule, "a");
                    counted.add(new Step(now, 0, true));
                    trace.add(t + "reset");
                }
                String f = compare(v, rule, counted, now, burst, window, limit, maxDelay);
                if (f != null) {
                    return f + "\n  " + String.join("\n  ", trace);
                }
            }
        }
        return null;
    }

    /**
     * The bucket that never had the units given back, yet saw every clock reading that wrote
     * the key (write time max(now, ts), no refill from a clock behind ts, forgotten once refilled).
     */
    private static String compare(RateLimiter limiter, Rule rule, List<Step> counted, long now, long burst,
                                  long window, long limit, long maxDelay) {
        long cap = burst * window;
        long reach = cap + maxDelay * limit;
        boolean present = false;
        long d = 0;
        long ts = 0;
        for (Step step : counted) {
            if (step.reset) {
                present = false;
                d = 0;
                continue;
            }
            d = present ? Math.max(0, d - Math.max(0, step.at - ts) * limit) : 0;
            present = present && d > 0;
            ts = present ? Math.max(step.at, ts) : step.at;
            long need = step.cost * window;
            if (d + need > reach) {
                return "model rejects a take the key allowed at t=" + (step.at - T0);
            }
            d += need;
            present = d > 0;
        }
        long dm = present ? Math.max(0, d - Math.max(0, now - ts) * limit) : 0;
        for (long c = 1; c <= Math.min(3, burst); c++) {
            Decision a = limiter.peek(rule, "a", c);
            long need = c * window;
            long remaining = dm < cap ? (cap - dm) / window : 0;
            boolean allowed = dm + need <= reach;
            long delay = allowed && dm + need > cap ? Math.floorDiv(dm + need - cap + limit - 1, limit) : 0;
            String model = "model(debt " + dm + ", remaining " + remaining + ", allowed " + allowed + ", delay "
                    + delay + ")";
            if (a.allowed() && !allowed) {
                return "cost " + c + ": key " + a + " allowed where " + model + " rejects";
            }
            if (a.remaining() > remaining) {
                return "cost " + c + ": key " + a + " has more left than " + model;
            }
            if (a.allowed() && a.delay().toMillis() < delay) {
                return "cost " + c + ": key " + a + " held shorter than " + model;
            }
        }
        return null;
    }
}
