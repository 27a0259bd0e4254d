package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random sequences of calls against Valkey and the in-process twin on one client clock: single
 * and several rules, shadow and count-rejected mixed, costs above 1, rules edited (limit,
 * window, burst, algorithm) between calls, windows from 1 ms to a day (and calendar days, weeks
 * and months in zones with daylight saving), and reservations kept or
 * given back (wholly or one rule) some steps later. After every call both
 * limiters must have answered the same, and every announced time must be exact: a rejected
 * request is allowed by every enforcing rule at its retry-after and not 1 ms before; a rule's
 * quota is full at its reset-after and not 1 ms before.
 */
@ExtendWith(ValkeyExtension.class)
class DifferentialTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final long[] WINDOWS = {1, 7, 50, 1_000, 10_000, 60_000, 3_600_000, 86_400_000};
    private static final long[] LIMITS = {1, 2, 3, 5, 10, 100};
    private static final String[] NAMES = {"r0", "r1", "r2", "r3"};
    private static final String[] KEYS = {"a", "b"};
    private static final int STEPS = 300;

    private final ValkeyServer valkey;

    DifferentialTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
    void valkeyAndTheTwinAgreeAndEveryAnnouncedTimeIsExact(long seed) {
        run(seed, null);
    }

    /**
     * The same with fixed windows that are often calendar periods (a day, week or month in a zone
     * with daylight saving), the clock starting shortly before Berlin's clocks go back, and edits
     * between rolling and calendar windows.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3})
    void onCalendarWindowsToo(long seed) {
        run(seed, new Random(seed * 7 + 3));
    }

    /** One sequence; {@code calendars}, when not null, draws more fixed windows, mostly calendar periods. */
    private void run(long seed, Random calendars) {
        Random random = new Random(seed);
        ManualClock clock = new ManualClock(T0 + random.nextInt(1_000_000));
        if (calendars != null) {
            clock.set(java.time.LocalDateTime.parse("2026-10-25T23:55").atZone(java.time.ZoneId.of("Europe/Berlin"))
                    .toInstant().toEpochMilli() + calendars.nextInt(300_000));
        }
        Rule[] rules = new Rule[NAMES.length];
        for (int i = 0; i < rules.length; i++) {
            rules[i] = randomRule(random, NAMES[i], randomAlgorithm(random, calendars), calendars);
        }
        try (ValkeyRateLimiter valkeyLimiter = ClientClockLimiters.fresh(valkey, clock);
             LocalRateLimiter twin = LocalRateLimiter.withClock(clock, 10_000)) {
            List<String> trace = new ArrayList<>();
            List<Reservation[]> pending = new ArrayList<>();
            int rejected = 0;
            int edits = 0;
            int refunds = 0;
            int onCalendars = 0;
            for (int step = 0; step < STEPS; step++) {
                if (random.nextInt(8) == 0) {
                    int edited = random.nextInt(rules.length);
                    Algorithm algorithm = random.nextInt(4) == 0 ? randomAlgorithm(random, calendars)
                            : rules[edited].algorithm();
                    rules[edited] = randomRule(random, NAMES[edited], algorithm, calendars);
                    trace.add("edit " + rules[edited]);
                    edits++;
                }
                if (!pending.isEmpty() && random.nextBoolean()) {
                    // Settle an earlier reservation, most often the latest: give back all or some
                    // of its rules, or keep it.
                    Reservation[] both = pending.remove(random.nextBoolean() ? pending.size() - 1
                            : random.nextInt(pending.size()));
                    String name = NAMES[random.nextInt(NAMES.length)];
                    int how = random.nextInt(3);
                    List<String> fromValkey = settle(both[0], how, name);
                    List<String> fromTwin = settle(both[1], how, name);
                    trace.add("t=" + (clock.getAsLong() - T0) + " settle " + how + " " + name + " -> " + fromValkey);
                    assertThat(fromValkey).as("given back by Valkey and the twin, seed %d, step %d, last steps:\n  %s",
                            seed, step, String.join("\n  ", trace.subList(Math.max(0, trace.size() - 8), trace.size())))
                            .isEqualTo(fromTwin);
                    refunds += fromValkey.size();
                }
                List<Claim> claims = randomClaims(random, rules);
                onCalendars += claims.stream().anyMatch(c -> c.rule().calendar() != null) ? 1 : 0;
                boolean reserve = random.nextBoolean();
                Decisions fromValkey;
                Decisions fromTwin;
                if (reserve) {
                    Reservation valkeyReservation = valkeyLimiter.reserveAll(claims);
                    Reservation twinReservation = twin.reserveAll(claims);
                    pending.add(new Reservation[] {valkeyReservation, twinReservation});
                    fromValkey = valkeyReservation.decisions();
                    fromTwin = twinReservation.decisions();
                } else {
                    fromValkey = valkeyLimiter.acquireAll(claims);
                    fromTwin = twin.acquireAll(claims);
                }
                trace.add("t=" + (clock.getAsLong() - T0) + " " + claims + " -> " + fromValkey);
                String context = "seed " + seed + ", step " + step + ", last steps:\n  "
                        + String.join("\n  ", trace.subList(Math.max(0, trace.size() - 8), trace.size()));
                assertThat(fromValkey).as("Valkey and the twin, %s", context).isEqualTo(fromTwin);
                for (RateLimiter limiter : List.of(valkeyLimiter, twin)) {
                    assertExact(limiter, clock, claims, fromValkey, context);
                }
                rejected += fromValkey.allowed() ? 0 : 1;
                clock.advance(randomStep(random, claims, fromValkey));
            }
            // A sequence that never rejects or never edits would test little.
            assertThat(rejected).as("rejections in seed %d", seed).isGreaterThan(STEPS / 10);
            assertThat(edits).as("edits in seed %d", seed).isGreaterThan(STEPS / 20);
            // Buckets give back only what they cannot have refilled since: fewer refunds give anything.
            assertThat(refunds).as("rules given back in seed %d", seed).isGreaterThan(STEPS / 30);
            if (calendars != null) {
                assertThat(onCalendars).as("calls with a calendar window in seed %d", seed).isGreaterThan(STEPS / 10);
            }
        }
    }

    /** 0: give everything back; 1: give back one rule's units; 2: keep them. */
    private static List<String> settle(Reservation reservation, int how, String rule) {
        return switch (how) {
            case 0 -> reservation.cancel();
            case 1 -> reservation.cancel(r -> r.name().equals(rule));
            default -> {
                reservation.commit();
                yield List.of();
            }
        };
    }

    /** Every announced time, checked with peeks at it and 1 ms before, then the clock put back. */
    private static void assertExact(RateLimiter limiter, ManualClock clock, List<Claim> claims, Decisions decisions,
                                    String context) {
        long now = clock.getAsLong();
        if (!decisions.allowed()) {
            long retry = decisions.retryAfter().toMillis();
            clock.set(now + retry - 1);
            assertThat(allEnforcingAllow(limiter, claims)).as("allowed 1 ms before retry-after %d ms, %s", retry,
                    context).isFalse();
            clock.set(now + retry);
            assertThat(allEnforcingAllow(limiter, claims)).as("allowed at retry-after %d ms, %s", retry, context)
                    .isTrue();
        }
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            Decision decision = decisions.all().get(i);
            long reset = decision.resetAfter().toMillis();
            if (reset > 0) {
                clock.set(now + reset - 1);
                assertThat(limiter.peek(claim.rule(), claim.key(), 1).remaining())
                        .as("%s full 1 ms before reset-after %d ms, %s", claim.rule().name(), reset, context)
                        .isLessThan(claim.rule().capacity());
                clock.set(now + reset);
                assertThat(limiter.peek(claim.rule(), claim.key(), 1).remaining())
                        .as("%s full at reset-after %d ms, %s", claim.rule().name(), reset, context)
                        .isEqualTo(claim.rule().capacity());
            }
        }
        clock.set(now);
    }

    private static boolean allEnforcingAllow(RateLimiter limiter, List<Claim> claims) {
        for (Claim claim : claims) {
            if (!claim.rule().shadow() && !limiter.peek(claim.rule(), claim.key(), claim.cost()).allowed()) {
                return false;
            }
        }
        return true;
    }

    /** Any algorithm; with calendars, a fixed window one time in two besides. */
    private static Algorithm randomAlgorithm(Random random, Random calendars) {
        Algorithm algorithm = Algorithm.values()[random.nextInt(Algorithm.values().length)];
        return calendars != null && calendars.nextBoolean() ? Algorithm.FIXED_WINDOW : algorithm;
    }

    private static Rule randomRule(Random random, String name, Algorithm algorithm, Random calendars) {
        long limit = LIMITS[random.nextInt(LIMITS.length)];
        Duration window = Duration.ofMillis(WINDOWS[random.nextInt(WINDOWS.length)]);
        Rule rule = Rule.of(name, algorithm, limit, window)
                .withCountRejected(!algorithm.isConcurrency() && random.nextInt(3) == 0)
                .withShadow(random.nextInt(6) == 0);
        if (algorithm.hasBurst() && random.nextBoolean()) {
            rule = rule.toBuilder().burst(1 + random.nextInt((int) (2 * limit))).build();
        }
        if (calendars != null && algorithm == Algorithm.FIXED_WINDOW && calendars.nextInt(4) > 0) {
            dev.ratelimit.CalendarWindow.Unit[] units = dev.ratelimit.CalendarWindow.Unit.values();
            String[] zones = {"Europe/Berlin", "America/New_York", "UTC"};
            rule = rule.toBuilder().calendar(dev.ratelimit.CalendarWindow.of(units[calendars.nextInt(units.length)],
                    java.time.ZoneId.of(zones[calendars.nextInt(zones.length)]))).build();
        }
        return rule;
    }

    private static List<Claim> randomClaims(Random random, Rule[] rules) {
        List<Rule> shuffled = new ArrayList<>(List.of(rules));
        Collections.shuffle(shuffled, random);
        int count = 1 + random.nextInt(3);
        List<Claim> claims = new ArrayList<>(count);
        for (Rule rule : shuffled.subList(0, count)) {
            long cost = random.nextInt(5) == 0 ? rule.capacity() : 1 + random.nextInt((int) Math.min(3, rule.capacity()));
            claims.add(Claim.of(rule, KEYS[random.nextInt(KEYS.length)], cost));
        }
        return claims;
    }

    /** Nothing, a millisecond, a fraction of a window, exactly an announced time, or a long way. */
    private static long randomStep(Random random, List<Claim> claims, Decisions decisions) {
        long window = claims.get(random.nextInt(claims.size())).rule().window().toMillis();
        return switch (random.nextInt(6)) {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> 1 + (long) (random.nextDouble() * window);
            case 3 -> decisions.retryAfter().toMillis();
            case 4 -> decisions.all().get(0).resetAfter().toMillis();
            default -> window * (1 + random.nextInt(3));
        };
    }
}
