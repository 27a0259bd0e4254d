package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A random workload from a seed: the target (in-process or Valkey, with or without the
 * resilient layer and its deny cache), a few rules drawn from all five algorithms and
 * {@code concurrency} (limits, windows, bursts, count-rejected, shadow), each with a failure
 * policy, a few keys, and a list of steps: calls over random subsets of the rules with costs
 * above 1, reservations settled soon, late or never, peeks, clock moves from 0 ms to several
 * windows and exactly to announced retry-afters, retries, rule edits and resets, and for Valkey
 * faults: stalls with lost replies, {@code FUNCTION FLUSH}, unreadable state.
 *
 * @param seed       the seed everything was drawn from
 * @param target     where it runs
 * @param denyCache  whether the resilient layer's deny cache is on
 * @param rules      the rules at the start, named r0, r1...
 * @param policies   each rule's failure policy (used with the resilient layer)
 * @param keys       the keys claims use
 * @param clockStart the client clock at the start, epoch ms
 * @param uses       each rule as the filter would use it: one cost, and whether its units are given back by
 *                   outcome (for runs that steer clear of the deny cache's open defects)
 * @param avoided    the open defects this workload steers clear of ({@link Known})
 * @param drawn      how many steps were drawn from the seed (the rest of the workload is drawn
 *                   after them, so this is needed to draw it again)
 * @param steps      what to do: the steps drawn, or fewer when the workload was shrunk
 */
record Workload(long seed, Target target, boolean denyCache, List<Rule> rules,
                Map<String, FailurePolicy> policies, List<String> keys, long clockStart, List<Use> uses,
                Set<Known> avoided, int drawn, List<Op> steps) {

    private static final long[] LIMITS = {1, 2, 3, 5, 10, 20};
    private static final long[] WINDOWS = {50, 100, 1_000, 10_000, 60_000};
    private static final long[] LEASE_LIMITS = {1, 2, 3, 5};
    /**
     * Lease timeouts, client time. At least 30 s because a lost lease is released by the
     * limiter only while its timeout has not passed in real time: a run lasts seconds, so the
     * timeout never ends that duty early.
     */
    private static final long[] LEASE_TIMEOUTS = {30_000, 60_000, 120_000};
    private static final List<String> KEYS = List.of("a", "b", "c");

    /**
     * A rule as the filter uses it: every request asks it for one cost, and it either counts by
     * outcome (its requests are reserved and its units may be given back) or never gives back.
     *
     * @param cost      the one cost
     * @param byOutcome whether it gives back
     */
    record Use(long cost, boolean byOutcome) {
    }

    /** The kinds of target a seed can draw. */
    enum Target {
        /** The in-process limiter, called directly. */
        LOCAL,
        /** The in-process limiter behind the resilient layer (deny cache on or off). */
        LOCAL_RESILIENT,
        /** Valkey, called directly: failures reach the caller. */
        VALKEY,
        /** Valkey behind the resilient layer: policies, fallback, deny cache. */
        VALKEY_RESILIENT
    }

    /**
     * The workload of a seed on a target.
     *
     * @param seed   the seed
     * @param target where it runs
     * @param steps   how many steps
     * @param avoided the open defects to steer clear of
     * @return the workload
     */
    static Workload generate(long seed, Target target, int steps, Set<Known> avoided) {
        Random random = new Random(seed * 31 + target.ordinal());
        boolean valkey = target == Target.VALKEY || target == Target.VALKEY_RESILIENT;
        boolean resilient = target == Target.LOCAL_RESILIENT || target == Target.VALKEY_RESILIENT;
        int ruleCount = 3 + random.nextInt(3);
        List<Rule> rules = new ArrayList<>();
        Map<String, FailurePolicy> policies = new LinkedHashMap<>();
        for (int i = 0; i < ruleCount; i++) {
            Algorithm algorithm = Algorithm.values()[random.nextInt(Algorithm.values().length)];
            Rule rule = rule(random, "r" + i, algorithm);
            rules.add(rule);
            policies.put(rule.name(), policy(random, rule, avoided));
        }
        List<Op> ops = new ArrayList<>(steps);
        Generator generator = new Generator(random, rules, valkey);
        while (ops.size() < steps) {
            ops.add(generator.next());
        }
        boolean denyCache = resilient && random.nextInt(3) > 0;
        List<Use> uses = new ArrayList<>();
        for (int i = 0; i < ruleCount; i++) {
            uses.add(new Use(1L + (random.nextInt(3) == 0 ? random.nextInt(3) : 0), random.nextBoolean()));
        }
        return new Workload(seed, target, denyCache, List.copyOf(rules), policies, KEYS,
                1_700_000_000_000L + random.nextInt(1_000_000_000), List.copyOf(uses), Set.copyOf(avoided),
                steps, List.copyOf(ops));
    }

    /**
     * The same workload with other steps: rules, policies, clock and uses as drawn.
     *
     * @param steps the steps, a part of the drawn ones when shrinking
     * @return the workload
     */
    Workload withSteps(List<Op> steps) {
        return new Workload(seed, target, denyCache, rules, policies, keys, clockStart, uses, avoided, drawn,
                List.copyOf(steps));
    }

    /**
     * Whether the store is Valkey.
     *
     * @return false for the in-process limiter
     */
    boolean valkey() {
        return target == Target.VALKEY || target == Target.VALKEY_RESILIENT;
    }

    /**
     * Whether calls go through {@code ResilientRateLimiter}.
     *
     * @return true for the resilient targets
     */
    boolean resilient() {
        return target == Target.LOCAL_RESILIENT || target == Target.VALKEY_RESILIENT;
    }

    /** A rule of the algorithm with random settings. */
    static Rule rule(Random random, String name, Algorithm algorithm) {
        if (algorithm.isConcurrency()) {
            return Rule.of(name, algorithm, pick(random, LEASE_LIMITS), Duration.ofMillis(pick(random, LEASE_TIMEOUTS)))
                    .withShadow(random.nextInt(8) == 0);
        }
        long limit = pick(random, LIMITS);
        Rule rule = Rule.of(name, algorithm, limit, Duration.ofMillis(pick(random, WINDOWS)))
                .withCountRejected(random.nextInt(4) == 0)
                .withShadow(random.nextInt(8) == 0);
        if (algorithm.hasBurst() && random.nextBoolean()) {
            rule = rule.withBurst(1 + random.nextInt((int) (2 * limit)));
        }
        return rule;
    }

    /** Open, closed, or local at a lower limit, a third each. */
    private static FailurePolicy policy(Random random, Rule rule, Set<Known> avoided) {
        return switch (random.nextInt(3)) {
            case 0 -> FailurePolicy.open();
            case 1 -> FailurePolicy.closed();
            default -> {
                long limit = 1 + random.nextInt((int) rule.limit());
                boolean shadow = random.nextInt(4) == 0 ? !rule.shadow() : rule.shadow();
                Rule local = Rule.of(rule.name(), rule.algorithm(), limit, rule.window())
                        .withCountRejected(!rule.algorithm().isConcurrency() && random.nextInt(4) == 0)
                        // As the filter builds it, shadow exactly when the shared rule is, unless exposed.
                        .withShadow(avoided.contains(Known.LOCAL_RULE_SHADOW_MISMATCH) ? rule.shadow() : shadow);
                if (rule.algorithm().hasBurst() && random.nextBoolean()) {
                    local = local.withBurst(1 + random.nextInt((int) (2 * limit)));
                }
                yield FailurePolicy.local(local);
            }
        };
    }

    private static long pick(Random random, long[] values) {
        return values[random.nextInt(values.length)];
    }

    /** Draws the steps one by one, remembering which keys are planted. */
    private static final class Generator {
        private final Random random;
        private final List<Rule> rules;
        private final boolean valkey;
        private final List<Op.Plant> planted = new ArrayList<>();

        Generator(Random random, List<Rule> rules, boolean valkey) {
            this.random = random;
            this.rules = rules;
            this.valkey = valkey;
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
                Op.Plant plant = new Op.Plant(random.nextInt(rules.size()), KEYS.get(random.nextInt(KEYS.size())));
                planted.add(plant);
                return plant;
            }
            if (roll < 36) {
                return edit();
            }
            if (roll < 40) {
                return new Op.Reset(claim());
            }
            if (roll < 70) {
                return new Op.Retry();
            }
            if (roll < 320) {
                return advance();
            }
            if (roll < 400) {
                return new Op.Peek(claim());
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
                    : new Op.ClaimSpec(leases.get(random.nextInt(leases.size())), KEYS.get(random.nextInt(KEYS.size())), 1);
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
                after.add(new Op.Probe(lease));
            }
            return new Op.Stall(300, during, after);
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
            Rule edited = rule(random, "r" + index, rules.get(index).algorithm());
            return new Op.Edit(index, edited.limit(), edited.window().toMillis(), edited.burst());
        }

        private List<Op.ClaimSpec> claims() {
            List<Integer> indexes = new ArrayList<>();
            for (int i = 0; i < rules.size(); i++) {
                indexes.add(i);
            }
            Collections.shuffle(indexes, random);
            int count = 1 + random.nextInt(Math.min(3, rules.size()));
            String key = KEYS.get(random.nextInt(KEYS.size()));
            List<Op.ClaimSpec> claims = new ArrayList<>(count);
            for (int i : indexes.subList(0, count)) {
                // Mostly one key per request, as one caller's rules; sometimes each its own.
                String claimKey = random.nextInt(4) == 0 ? KEYS.get(random.nextInt(KEYS.size())) : key;
                claims.add(new Op.ClaimSpec(i, claimKey, cost()));
            }
            return claims;
        }

        private Op.ClaimSpec claim() {
            return new Op.ClaimSpec(random.nextInt(rules.size()), KEYS.get(random.nextInt(KEYS.size())), cost());
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
}
