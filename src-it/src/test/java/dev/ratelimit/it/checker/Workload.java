package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
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
 * faults: stalls with lost replies (on a cluster, of one node), {@code FUNCTION FLUSH},
 * unreadable state; on a single Valkey also restarts, Errors thrown inside the client, and an
 * opening burst of failures or crowd of concurrent callers that opens a fresh breaker; under
 * Sentinel one failover in the middle of the run, calls going out while it happens. Valkey
 * runs have one or two limiter instances sharing the store; on {@link Target#VALKEY_TWO_JVMS}
 * always two, each in a child JVM of its own. The steps are drawn by {@link Generator}.
 *
 * @param seed       the seed everything was drawn from
 * @param target     where it runs
 * @param denyCache  whether the resilient layer's deny cache is on
 * @param rules      the rules at the start, named r0, r1... (a fixed window may be a calendar
 *                   period: {@link Calendars})
 * @param policies   each rule's failure policy (used with the resilient layer)
 * @param keys       the keys claims use
 * @param clockStart the client clock at the start, epoch ms
 * @param avoided    the open defects this workload steers clear of ({@link Known})
 * @param instances  limiter instances sharing the store (1 or 2; the calls alternate between them)
 * @param breakerOpenMillis how long each instance's circuit breaker stays open before a probe
 * @param localLeases the rules whose units each Valkey instance leases ahead, by name
 * @param serverClock whether the limiter reads Valkey's {@code TIME} (production's default) rather
 *                   than the client clock the runner moves: then time is the wall clock, a clock
 *                   move is real waiting, and rules' windows are short (see {@link #serverClock(long, Target)})
 * @param drawn      how many steps were drawn from the seed (the rest of the workload is drawn
 *                   after them, so this is needed to draw it again)
 * @param steps      what to do: the steps drawn, or fewer when the workload was shrunk
 */
record Workload(long seed, Target target, boolean denyCache, List<Rule> rules,
                Map<String, FailurePolicy> policies, List<String> keys, long clockStart,
                Set<Known> avoided, int instances, long breakerOpenMillis, Map<String, LocalLease> localLeases,
                boolean serverClock, int drawn, List<Op> steps) {

    /**
     * A rule's local lease: the most units an instance takes ahead per key, and for how long
     * (client time).
     *
     * @param size   units
     * @param millis lease time
     */
    /**
     * The rules leased as the workload starts, with their leases: those of {@link #localLeases}
     * a lease can serve (a token bucket, GCRA or fixed window that neither only observes nor
     * counts rejected attempts; the limiter's builder refuses the others). A rule edited later
     * keeps its lease by name, as the limiter does.
     */
    Map<Rule, LocalLease> leasedRules() {
        Map<Rule, LocalLease> leased = new java.util.LinkedHashMap<>();
        for (Rule rule : rules) {
            LocalLease lease = localLeases.get(rule.name());
            boolean servable = (rule.algorithm() == dev.ratelimit.Algorithm.TOKEN_BUCKET
                    || rule.algorithm() == dev.ratelimit.Algorithm.GCRA
                    || rule.algorithm() == dev.ratelimit.Algorithm.FIXED_WINDOW) && !rule.shadow() && !rule.countRejected()
                    && rule.maxDelay().isZero();
            if (lease != null && servable) {
                leased.put(rule, lease);
            }
        }
        return leased;
    }

    record LocalLease(long size, long millis) {

        /** The units a bucket's lease charges beside its own for the refill while it lasts. */
        long margin(Rule rule) {
            if (rule.algorithm() == Algorithm.FIXED_WINDOW) {
                return 0;
            }
            long window = rule.window().toMillis();
            return (millis * rule.limit() + window - 1) / window;
        }
    }

    private static final long[] LOCAL_LEASE_SIZES = {1, 2, 4, 8};
    private static final long[] LOCAL_LEASE_MILLIS = {20, 100, 1_000};
    /**
     * Local lease times on the server clock (real time), drawn in the same place: short beside
     * the windows, so that leases end, and the sweeper gives them back, many times in a run.
     */
    private static final long[] SERVER_LOCAL_LEASE_MILLIS = {5, 20, 50};

    /** The breaker's open period, long enough that a run goes on. */
    static final long BREAKER_OPEN_MILLIS = 300;
    /**
     * The breaker's open period in runs that begin with a crowd: shorter than the 50 ms socket
     * timeout, so that calls sent before it opened fail while its probe is out.
     */
    static final long CROWD_BREAKER_OPEN_MILLIS = 5;

    private static final long[] LIMITS = {1, 2, 3, 5, 10, 20};
    private static final long[] WINDOWS = {50, 100, 1_000, 10_000, 60_000};
    /**
     * The windows on the server clock, drawn as {@link #WINDOWS} are (the same draw, the value in
     * the same place): short enough that each rolls over, refills or ages out many times within
     * a run of a few seconds of real time, and that a clock move, now a wait, is short.
     */
    private static final long[] SERVER_WINDOWS = {10, 20, 50, 100, 200};
    private static final long[] LEASE_LIMITS = {1, 2, 3, 5};
    /**
     * Lease timeouts, client time. At least 30 s because a lost lease is released by the
     * limiter only while its timeout has not passed in real time: a run lasts seconds, so the
     * timeout never ends that duty early.
     */
    private static final long[] LEASE_TIMEOUTS = {30_000, 60_000, 120_000};
    /**
     * Lease timeouts on the server clock: real time, so short enough that leases never released
     * time out within a run, and long enough (beside the three 110 ms chances) that a lost lease
     * is often released by the limiter before it times out.
     */
    private static final long[] SERVER_LEASE_TIMEOUTS = {250, 500, 1_000};
    static final List<String> KEYS = List.of("a", "b", "c");

    /** The kinds of target a seed can draw. */
    enum Target {
        /** The in-process limiter, called directly. */
        LOCAL,
        /** The in-process limiter behind the resilient layer (deny cache on or off). */
        LOCAL_RESILIENT,
        /** Valkey, called directly: failures reach the caller. */
        VALKEY,
        /** Valkey behind the resilient layer: policies, fallback, deny cache. */
        VALKEY_RESILIENT,
        /** A three-node Valkey Cluster, called directly. */
        CLUSTER,
        /** A three-node Valkey Cluster behind the resilient layer. */
        CLUSTER_RESILIENT,
        /**
         * Valkey, called directly, by two instances in two JVMs: each a limiter in a child
         * process of its own ({@link ChildLimiter}), started for the run, with its own client
         * pool, leases, lost-lease memory, breaker and static state, on the same keys. Without
         * the resilient layer: what a second JVM adds is beneath it (the Valkey limiter's
         * process-wide state), and without it every failure of a child's limiter reaches the
         * checker as what it threw, to be judged, and every decision is the store's.
         */
        VALKEY_TWO_JVMS,
        /**
         * A primary managed by Valkey Sentinel (a replica, three sentinels), called directly;
         * the limiter finds the primary through the sentinels, and one failover happens mid-run.
         */
        SENTINEL,
        /** The Sentinel-managed primary behind the resilient layer. */
        SENTINEL_RESILIENT;

        /** The targets of the single store: the fixed and random seeds of every build run on these. */
        static final List<Target> SINGLE = List.of(LOCAL, LOCAL_RESILIENT, VALKEY, VALKEY_RESILIENT);

        /** Whether the store is Valkey: single, cluster or under Sentinel. */
        boolean valkey() {
            return this != LOCAL && this != LOCAL_RESILIENT;
        }

        /** Whether the store is a Valkey Cluster. */
        boolean cluster() {
            return this == CLUSTER || this == CLUSTER_RESILIENT;
        }

        /** Whether each instance runs in a child JVM of its own. */
        boolean twoJvms() {
            return this == VALKEY_TWO_JVMS;
        }

        /** Whether the store is a primary managed by Sentinel. */
        boolean sentinel() {
            return this == SENTINEL || this == SENTINEL_RESILIENT;
        }

        /**
         * Whether the store is the one Valkey server of the test class: it can be restarted, and
         * faults can be armed in each instance's client (the checker's own {@link ErrorClient},
         * or a child JVM's).
         */
        boolean single() {
            return this == VALKEY || this == VALKEY_RESILIENT || this == VALKEY_TWO_JVMS;
        }

        /** Whether calls go through {@code ResilientRateLimiter}. */
        boolean resilient() {
            return this == LOCAL_RESILIENT || this == VALKEY_RESILIENT || this == CLUSTER_RESILIENT
                    || this == SENTINEL_RESILIENT;
        }
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
        boolean serverClock = serverClock(seed, target);
        boolean valkey = target.valkey();
        boolean resilient = target.resilient();
        int ruleCount = 3 + random.nextInt(3);
        List<Rule> rules = new ArrayList<>();
        Map<String, FailurePolicy> policies = new LinkedHashMap<>();
        for (int i = 0; i < ruleCount; i++) {
            Algorithm algorithm = Algorithm.values()[random.nextInt(Algorithm.values().length)];
            Rule rule = rule(random, "r" + i, algorithm, serverClock);
            rules.add(rule);
            policies.put(rule.name(), policy(random, rule));
        }
        // A calendar window for a fixed-window rule, from a stream of its own (every other draw of a
        // seed stays): the run then starts shortly before one of its period ends.
        Random calendars = new Random(seed * 229 + target.ordinal() + 17);
        CalendarWindow calendar = null;
        for (int i = 0; i < rules.size() && calendar == null; i++) {
            if (rules.get(i).algorithm() == Algorithm.FIXED_WINDOW && calendars.nextBoolean()) {
                calendar = Calendars.draw(calendars);
                rules.set(i, rules.get(i).toBuilder().calendar(calendar).build());
                policies.put(rules.get(i).name(), Calendars.policy(policies.get(rules.get(i).name()), calendar));
            }
        }
        // Requests held for slots to come, on half of the seeds, from a stream of their own (every
        // other draw of a seed stays): a bucket rule that neither only observes nor counts
        // rejections may delay, by up to a few times its time to fill.
        Random delays = new Random(seed * 331 + target.ordinal() + 23);
        if (delays.nextBoolean()) {
            rules.replaceAll(rule -> delays.nextBoolean() ? withMaxDelay(rule, delays) : rule);
        }
        List<Op> ops = new ArrayList<>(steps);
        // What came after the first version of the workload is drawn from a stream of its own,
        // so that a seed's other draws stay as they were.
        Random extra = new Random(seed * 131 + target.ordinal() + 7);
        int instances = valkey && extra.nextBoolean() ? 2 : 1;
        if (target.twoJvms()) {
            instances = 2; // the point of the target (drawn all the same: the draws after it stay)
        }
        boolean single = target.single();
        int opening = single ? extra.nextInt(3) : 0;
        Generator openings = new Generator(extra, rules, valkey, single, null, serverClock);
        if (opening == 1) {
            ops.add(openings.burst());
        } else if (opening == 2) {
            ops.add(openings.crowd());
        }
        Generator generator = new Generator(random, rules, valkey, single, calendars, serverClock);
        while (ops.size() < steps) {
            ops.add(generator.next());
        }
        if (target.sentinel() && !ops.isEmpty()) {
            // One failover, in the middle third of the run (a step there replaced), drawn from a
            // stream of its own: the other steps stay as the seed drew them.
            Random failing = new Random(seed * 271 + target.ordinal() + 13);
            int at = ops.size() / 3 + failing.nextInt(Math.max(1, ops.size() / 3));
            ops.set(at, new Generator(failing, rules, true, false, null, serverClock).failover());
        }
        // A rule holds a request only where it decides it alone: on seeds with rules that delay,
        // half the calls naming one are made on it alone (a stream of its own: every other draw
        // stays), so that requests queue for slots, and are given back from the queue.
        Random alone = new Random(seed * 337 + target.ordinal() + 29);
        if (rules.stream().anyMatch(rule -> !rule.maxDelay().isZero())) {
            ops.replaceAll(op -> aloneOnDelayingRule(op, rules, alone));
        }
        // Costs known after the work, on a third of the seeds, from a stream of their own (every
        // other draw of a seed stays): some settlements become commits by a cost drawn here.
        Random costs = new Random(seed * 317 + target.ordinal() + 19);
        if (costs.nextInt(3) == 0) {
            long most = rules.stream().mapToLong(Rule::capacity).max().orElse(1);
            ops.replaceAll(op -> withCosts(op, costs, most));
        }
        boolean denyCache = resilient && random.nextInt(3) > 0;
        // Local leases come from a stream of their own too: every other draw of a seed stays.
        Random leasing = new Random(seed * 197 + target.ordinal() + 11);
        Map<String, LocalLease> localLeases = new LinkedHashMap<>();
        if (valkey && leasing.nextBoolean()) {
            for (Rule rule : rules) {
                if (leasing.nextInt(3) > 0) {
                    localLeases.put(rule.name(), new LocalLease(pick(leasing, LOCAL_LEASE_SIZES),
                            pick(leasing, serverClock ? SERVER_LOCAL_LEASE_MILLIS : LOCAL_LEASE_MILLIS)));
                }
            }
        }
        long clockStart = 1_700_000_000_000L + random.nextInt(1_000_000_000);
        if (calendar != null) {
            clockStart = Calendars.clockStart(calendars, calendar);
        }
        return new Workload(seed, target, denyCache, List.copyOf(rules), policies, KEYS, clockStart, Set.copyOf(avoided),
                instances, opening == 2 ? CROWD_BREAKER_OPEN_MILLIS : BREAKER_OPEN_MILLIS, Map.copyOf(localLeases),
                serverClock, steps, List.copyOf(ops));
    }

    /**
     * The rule with a max delay of a half, one or three times its time to fill from empty (at
     * most the most the rule allows), if it can delay at all; else the rule as it is.
     */
    static Rule withMaxDelay(Rule rule, Random delays) {
        if (!rule.algorithm().hasBurst() || rule.shadow() || rule.countRejected()) {
            return rule;
        }
        long fill = Math.max(1, rule.burst() * rule.window().toMillis() / rule.limit());
        long[] times = {fill / 2, fill, 3 * fill};
        return rule.withMaxDelay(Duration.ofMillis(Math.max(1, times[delays.nextInt(times.length)])));
    }

    /**
     * The call with, one time in two, only its claim on a rule that delays (the first such), so
     * that the rule decides it alone and may hold it for a slot; a stall's steps too.
     */
    private static Op aloneOnDelayingRule(Op op, List<Rule> rules, Random alone) {
        if (op instanceof Op.Take take && take.claims().size() > 1) {
            for (Op.ClaimSpec claim : take.claims()) {
                if (!rules.get(claim.rule()).maxDelay().isZero()) {
                    return alone.nextBoolean() ? new Op.Take(take.reserve(), List.of(claim)) : op;
                }
            }
        }
        if (op instanceof Op.Stall stall) {
            List<Op> during = new ArrayList<>(stall.during());
            List<Op> after = new ArrayList<>(stall.after());
            during.replaceAll(each -> aloneOnDelayingRule(each, rules, alone));
            after.replaceAll(each -> aloneOnDelayingRule(each, rules, alone));
            return new Op.Stall(stall.millis(), during, after);
        }
        return op;
    }

    /**
     * The longest delay an edited rule can keep: its own, cut to the most the edit allows
     * (seven times the time to fill from empty), none for a rule that cannot delay.
     */
    static Duration keptMaxDelay(Duration maxDelay, Rule edited) {
        if (maxDelay.isZero() || !edited.algorithm().hasBurst() || edited.shadow() || edited.countRejected()) {
            return Duration.ZERO;
        }
        long most = 7 * edited.burst() * edited.window().toMillis() / edited.limit();
        return Duration.ofMillis(Math.min(maxDelay.toMillis(), most));
    }

    /**
     * The step with half its settlements (in a stall's steps too) made commits by a cost known
     * after the work: mostly near a request's, sometimes 0, sometimes well past every rule's
     * quota (into debt).
     */
    private static Op withCosts(Op op, Random costs, long most) {
        if (op instanceof Op.Settle settle && costs.nextBoolean()) {
            long actual = switch (costs.nextInt(6)) {
                case 0 -> 0;
                case 1, 2 -> 1 + costs.nextInt(3);
                case 3, 4 -> costs.nextInt((int) Math.min(most, 50) + 1);
                default -> most + costs.nextInt((int) Math.min(2 * most, 200) + 1);
            };
            return new Op.Settle(settle.pick(), "commit-cost", settle.rule(), actual);
        }
        if (op instanceof Op.Stall stall) {
            List<Op> during = new ArrayList<>(stall.during());
            List<Op> after = new ArrayList<>(stall.after());
            during.replaceAll(each -> withCosts(each, costs, most));
            after.replaceAll(each -> withCosts(each, costs, most));
            return new Op.Stall(stall.millis(), during, after);
        }
        return op;
    }

    /**
     * Whether a seed runs on the server clock: on Valkey, every other seed of each target, the
     * targets in turn (seed + target odd), so that as many runs decide on Valkey's {@code TIME}
     * as on the client clock, in the build's seeds and in a long run's. No random draw: every
     * other draw of a seed stays as it was. Under Sentinel the same: the primary and its replica
     * run on this machine (checked when the target is built), so the promoted replica's
     * {@code TIME} is the clock the old primary's was; on the cluster too, whose nodes all run
     * here (long runs on its server clock found a request refused by one slot group answered
     * allowed, see docs/checker.md).
     */
    static boolean serverClock(long seed, Target target) {
        return target.valkey() && Math.floorMod(seed + target.ordinal(), 2) == 1;
    }

    /**
     * The same workload with other steps: rules, policies, clock, instances and breaker as drawn.
     *
     * @param steps the steps, a part of the drawn ones when shrinking
     * @return the workload
     */
    Workload withSteps(List<Op> steps) {
        return new Workload(seed, target, denyCache, rules, policies, keys, clockStart, avoided, instances,
                breakerOpenMillis, localLeases, serverClock, drawn, List.copyOf(steps));
    }

    /**
     * Whether the store is Valkey.
     *
     * @return false for the in-process limiter
     */
    boolean valkey() {
        return target.valkey();
    }

    /**
     * Whether the store is a Valkey Cluster.
     *
     * @return true for the cluster targets
     */
    boolean cluster() {
        return target.cluster();
    }

    /**
     * Whether the store is a primary managed by Sentinel.
     *
     * @return true for the Sentinel targets
     */
    boolean sentinel() {
        return target.sentinel();
    }

    /**
     * Whether calls go through {@code ResilientRateLimiter}.
     *
     * @return true for the resilient targets
     */
    boolean resilient() {
        return target.resilient();
    }

    /**
     * Whether concurrent calls may share a pipeline. Not in a run that begins with a crowd:
     * there each call is sent on its own, so that the breaker's promises can be read from the
     * commands sent (a pipelined call may be sent by another caller's thread).
     *
     * @return false when the first step is a crowd
     */
    boolean pipelined() {
        return steps.isEmpty() || !(steps.get(0) instanceof Op.Crowd);
    }

    /**
     * A rule of the algorithm with random settings; on the server clock its window (a lease's
     * timeout) is the short one drawn in the same place.
     */
    static Rule rule(Random random, String name, Algorithm algorithm, boolean serverClock) {
        if (algorithm.isConcurrency()) {
            long timeout = pick(random, serverClock ? SERVER_LEASE_TIMEOUTS : LEASE_TIMEOUTS);
            return Rule.of(name, algorithm, pick(random, LEASE_LIMITS), Duration.ofMillis(timeout))
                    .withShadow(random.nextInt(8) == 0);
        }
        long limit = pick(random, LIMITS);
        Rule rule = Rule.of(name, algorithm, limit, Duration.ofMillis(pick(random, serverClock ? SERVER_WINDOWS : WINDOWS)))
                .withCountRejected(random.nextInt(4) == 0)
                .withShadow(random.nextInt(8) == 0);
        if (algorithm.hasBurst() && random.nextBoolean()) {
            rule = rule.toBuilder().burst(1 + random.nextInt((int) (2 * limit))).build();
        }
        return rule;
    }

    /** Open, closed, or local at a lower limit, a third each. */
    private static FailurePolicy policy(Random random, Rule rule) {
        return switch (random.nextInt(3)) {
            case 0 -> FailurePolicy.open();
            case 1 -> FailurePolicy.closed();
            default -> {
                long limit = 1 + random.nextInt((int) rule.limit());
                // Now and then built with the other shadow flag: the limiter must derive it from the rule's.
                boolean shadow = random.nextInt(4) == 0 ? !rule.shadow() : rule.shadow();
                Rule local = Rule.of(rule.name(), rule.algorithm(), limit, rule.window())
                        .withCountRejected(!rule.algorithm().isConcurrency() && random.nextInt(4) == 0)
                        .withShadow(shadow);
                if (rule.algorithm().hasBurst() && random.nextBoolean()) {
                    local = local.toBuilder().burst(1 + random.nextInt((int) (2 * limit))).build();
                }
                yield FailurePolicy.local(local);
            }
        };
    }

    static long pick(Random random, long[] values) {
        return values[random.nextInt(values.length)];
    }
}
