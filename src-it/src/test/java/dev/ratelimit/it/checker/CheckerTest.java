package dev.ratelimit.it.checker;

import dev.ratelimit.it.ValkeyCluster;
import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeySentinels;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The invariant checker in the build: random mixed workloads on the in-process limiter, on
 * a real Valkey (on the client clock or, every other seed of each target, on Valkey's
 * {@code TIME}, production's default: {@link Workload#serverClock}), on a three-node
 * Valkey Cluster (the same two clocks; a few seeds; the cluster is
 * started once, only when a cluster target runs) and on a primary managed by Sentinel, failed over
 * in the middle of each run (a few short seeds; started once, only when a Sentinel target
 * runs), with and without the resilient layer, one or
 * two limiter instances sharing the store (on {@link Workload.Target#VALKEY_TWO_JVMS} each in a
 * child JVM of its own, a few seeds), their histories checked
 * against every algorithm's promises ({@link Invariants}). A fixed set of seeds and one random
 * seed, printed, run in {@code ./mvnw verify}; a violation fails with the seed, the invariant,
 * the events that show it and the kept history file.
 *
 * <p>Long runs, any seed, as long as wanted: {@code -Dchecker.seconds=3600} (seeds from
 * {@code -Dchecker.seed}, else a random one, each on every target, until the time is up or a
 * run fails); {@code -Dchecker.seed=N} alone reruns seed N on every target.
 * A failing run is shrunk ({@link Shrinker}: {@code -Dchecker.shrinkRuns}, {@code -Dchecker.shrinkSeconds})
 * and its shortest failing workload printed and kept; {@code -Dchecker.replay=<file>} runs a
 * kept workload or history again ({@link Replay}).
 * {@code -Dchecker.keepGoing=true} makes a long run go on past failing runs and list them all (not shrunk),
 * {@code -Dchecker.targets=VALKEY,CLUSTER,SENTINEL,...} chooses the targets of a long run (by default
 * those of the single store), {@code -Dchecker.steps}
 * sets the steps per run, {@code -Dchecker.expose=ALL} stops avoiding the open defects
 * ({@link Known}).
 */
@ExtendWith(ValkeyExtension.class)
class CheckerTest {

    /** Steps per run in the build: a few seconds per run on a busy two-core machine. */
    static final int STEPS = Integer.getInteger("checker.steps", 1_500);

    /**
     * Steps of a seed's run on a target: two fifths as many on the server clock, whose clock
     * moves are real waits, so that a run takes no longer than on the client clock.
     */
    static int steps(long seed, Workload.Target target) {
        return steps(seed, target, STEPS);
    }

    /** The same, from another number of steps on the client clock. */
    static int steps(long seed, Workload.Target target, int steps) {
        return Workload.serverClock(seed, target) ? steps * 2 / 5 : steps;
    }
    /**
     * The build's seeds: 1 to 10, and seeds kept for what they once caught (1010: a token bucket
     * whose own instance's lease held it below its burst; 1000: a deny cache that held a
     * concurrency rule's rejection while a lease was free; 1003: a request a local policy refused
     * while the store's part kept its units; 3037: a peek refused for the units its own instance's
     * GCRA lease kept back; 13035: a rule that held a request for a slot, asked again after
     * another part refused it, described as admitting it at once).
     */
    static final long[] SEEDS = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1000, 1003, 1010, 3037, 13035};
    /** Seeds on each cluster target in the build: the cluster's share of its time is small. */
    private static final long[] CLUSTER_SEEDS = {1, 2};
    /**
     * Seeds on the two-JVM target in the build ({@link Workload.Target#VALKEY_TWO_JVMS}), two
     * child JVMs started for each: both clocks (123 on the server's), an opening burst (66, 123)
     * and crowd (2), concurrency rules, leases, calendar windows. With call numbers drawn from one
     * fixed seed in every JVM ({@code src-it/mutants/call-numbers-fixed-seed.patch}), 66 and 123
     * failed in every try, also after the single store's fixed runs in the same test JVM; 2 has
     * no concurrency rule.
     */
    static final long[] TWO_JVM_SEEDS = {66, 123, 2};
    /**
     * Seeds on each Sentinel target in the build, one on each clock per target (seed + target
     * odd: the server clock), each run with one failover.
     */
    private static final long[] SENTINEL_SEEDS = {1, 2};
    /**
     * Steps of the build's Sentinel runs (two fifths of them on the server clock): fewer than
     * elsewhere, as a failover takes a second or more of its own; long runs take {@link #STEPS}.
     */
    static final int SENTINEL_STEPS = 400;

    /** Started at the first cluster run of this class, stopped after it. */
    private static ValkeyCluster cluster;
    /** Started at the first Sentinel run of this class, stopped after it. */
    private static ValkeySentinels sentinels;

    private final ValkeyServer valkey;

    CheckerTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    static Stream<Arguments> fixed() {
        List<Arguments> runs = new ArrayList<>();
        for (long seed : SEEDS) {
            for (Workload.Target target : Workload.Target.SINGLE) {
                runs.add(Arguments.of(seed, target));
            }
        }
        return runs.stream();
    }

    static Stream<Arguments> fixedOnTheCluster() {
        List<Arguments> runs = new ArrayList<>();
        for (long seed : CLUSTER_SEEDS) {
            runs.add(Arguments.of(seed, Workload.Target.CLUSTER));
            runs.add(Arguments.of(seed, Workload.Target.CLUSTER_RESILIENT));
        }
        return runs.stream();
    }

    static Stream<Arguments> fixedUnderSentinel() {
        List<Arguments> runs = new ArrayList<>();
        for (long seed : SENTINEL_SEEDS) {
            runs.add(Arguments.of(seed, Workload.Target.SENTINEL));
            runs.add(Arguments.of(seed, Workload.Target.SENTINEL_RESILIENT));
        }
        return runs.stream();
    }

    @ParameterizedTest(name = "seed {0} on {1}")
    @MethodSource("fixed")
    void fixedSeedsKeepEveryPromise(long seed, Workload.Target target) {
        check(seed, target);
    }

    static Stream<Arguments> fixedInTwoJvms() {
        return java.util.Arrays.stream(TWO_JVM_SEEDS).mapToObj(seed -> Arguments.of(seed, Workload.Target.VALKEY_TWO_JVMS));
    }

    /** Two instances in two JVMs on one Valkey and the same keys: what one JVM's shared static state hides. */
    @ParameterizedTest(name = "seed {0} on {1}")
    @MethodSource("fixedInTwoJvms")
    void fixedSeedsKeepEveryPromiseInTwoJvms(long seed, Workload.Target target) {
        check(seed, target);
    }

    /** The cluster: one node stalled while requests span it and another node's leases. */
    @ParameterizedTest(name = "seed {0} on {1}")
    @MethodSource("fixedOnTheCluster")
    void fixedSeedsKeepEveryPromiseOnTheCluster(long seed, Workload.Target target) {
        check(seed, target);
    }

    /** Under Sentinel: a failover in the middle of each run, calls going out while it happens. */
    @ParameterizedTest(name = "seed {0} on {1}")
    @MethodSource("fixedUnderSentinel")
    void fixedSeedsKeepEveryPromiseUnderSentinel(long seed, Workload.Target target) {
        verify(run(Workload.generate(seed, target, steps(seed, target, SENTINEL_STEPS), Known.avoided()),
                Checker.name(seed, target), true), null);
    }

    private static synchronized ValkeySentinels sentinels() {
        if (sentinels == null) {
            sentinels = ValkeySentinels.start();
        }
        return sentinels;
    }

    private static synchronized ValkeyCluster cluster() {
        if (cluster == null) {
            cluster = ValkeyCluster.start(3);
        }
        return cluster;
    }

    @AfterAll
    static synchronized void stopCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
        if (sentinels != null) {
            sentinels.close();
            sentinels = null;
        }
    }

    /**
     * The fixed seeds' Valkey and cluster workloads call what operators call: {@code ratelimit
     * reset} and {@code inspect} from a limiter of their own, between the instances' calls.
     */
    @Test
    void theFixedSeedsResetAndInspectAsOperatorsDo() {
        for (Workload.Target target : List.of(Workload.Target.VALKEY, Workload.Target.VALKEY_RESILIENT,
                Workload.Target.CLUSTER)) {
            List<Op> steps = new ArrayList<>();
            for (long seed : target == Workload.Target.CLUSTER ? CLUSTER_SEEDS : SEEDS) {
                steps.addAll(Workload.generate(seed, target, steps(seed, target), Known.avoided()).steps());
            }
            assertThat(steps.stream().filter(Op.OperatorReset.class::isInstance).count()).as(target + " resets")
                    .isPositive();
            assertThat(steps.stream().filter(Op.Inspect.class::isInstance).count()).as(target + " inspects")
                    .isPositive();
        }
    }

    /**
     * The open defects ({@link Known}) are still there: each one's seed, with that defect alone
     * exposed, still breaks an invariant. When this fails for one, it was fixed: delete its entry
     * in {@link Known}, and the workload exercises it from then on.
     */
    @Test
    void openDefectsAreStillFound() {
        List<String> gone = new ArrayList<>();
        for (Known defect : Known.values()) {
            if (defect.seed() == 0 || defect.target() == null) {
                continue; // not pinned, or pinned to a seed over HTTP (HttpCheckerTest keeps it)
            }
            if (defect.target() == Workload.Target.VALKEY || defect.target() == Workload.Target.VALKEY_RESILIENT) {
                valkey.flushAll();
            }
            Set<Known> avoided = EnumSet.allOf(Known.class);
            avoided.remove(defect);
            Checker.Result result = Checker.run(defect.seed(), defect.target(), 1_500, valkey, avoided);
            if (result.violations().isEmpty()) {
                gone.add(defect + " (seed " + defect.seed() + " on " + defect.target() + ")");
                continue;
            }
            System.out.println("checker: open defect " + defect + " still found: " + result.violations().get(0));
            result.file().toFile().delete();
        }
        System.out.println("checker: " + Known.values().length + " open defects in Known");
        assertThat(gone).as("open defects no longer found by their seeds: if fixed, delete their entries in Known")
                .isEmpty();
    }

    /**
     * One more seed on every target, as the run asks: a random one, printed (the default, in
     * every build); {@code -Dchecker.seed=N} alone reruns that seed (on {@code checker.targets}
     * when given); {@code -Dchecker.seconds=S}
     * runs seeds one after another for that long (from {@code checker.seed}, or a random one).
     */
    @Test
    void theChosenSeedsKeepEveryPromise() {
        String replay = System.getProperty("checker.replay", "");
        if (!replay.isBlank()) {
            Workload workload = Replay.read(Path.of(replay));
            System.out.println("checker: replaying " + workload.steps().size() + " steps of seed " + workload.seed()
                    + " on " + workload.target() + " from " + Path.of(replay).toAbsolutePath());
            verify(run(workload, Checker.name(workload.seed(), workload.target()) + ".replay", true), null);
            return;
        }
        if (Long.getLong("checker.seconds") != null) {
            longRun();
            return;
        }
        Long given = Long.getLong("checker.seed");
        long seed = given != null ? given : ThreadLocalRandom.current().nextLong(1_000, 1_000_000_000);
        if (given == null) {
            System.out.println("checker: random seed " + seed + " (rerun with -Dchecker.seed=" + seed + ")");
        }
        for (Workload.Target target : targets()) {
            check(seed, target);
        }
    }

    private void longRun() {
        long began = System.nanoTime();
        long deadline = began + Long.getLong("checker.seconds") * 1_000_000_000L;
        long first = Long.getLong("checker.seed", ThreadLocalRandom.current().nextLong(1_000, 1_000_000_000));
        boolean keepGoing = Boolean.getBoolean("checker.keepGoing");
        System.out.println("checker: long run from seed " + first + " on " + targets());
        List<String> caught = new ArrayList<>();
        int runs = 0;
        for (long seed = first; System.nanoTime() < deadline; seed++) {
            for (Workload.Target target : targets()) {
                runs++;
                String context = "run " + runs + " (seeds " + first + " to " + seed + "), "
                        + (System.nanoTime() - began) / 1_000_000 + " ms into the long run";
                if (!keepGoing) {
                    check(seed, target, context);
                    continue;
                }
                // Every run, for how often a defect is caught: each failing run in one line.
                Checker.Result result = run(seed, target);
                if (!result.passed()) {
                    Violation v = result.violations().get(0);
                    List<String> others = result.violations().stream().map(Violation::invariant).distinct()
                            .filter(invariant -> !invariant.equals(v.invariant())).toList();
                    caught.add(context + ": seed " + seed + " " + target + " " + v.domain() + " " + v.rule() + ": "
                            + v.invariant() + (others.isEmpty() ? "" : "; also " + others));
                    System.out.println("checker: caught in " + caught.get(caught.size() - 1));
                }
            }
        }
        System.out.println("checker: " + runs + " runs in " + (System.nanoTime() - began) / 1_000_000_000 + " s, "
                + caught.size() + " failed");
        assertThat(caught).as("runs that broke an invariant (-Dchecker.keepGoing)").isEmpty();
    }

    /**
     * The targets of a long run: {@code -Dchecker.targets=VALKEY,CLUSTER,SENTINEL}, else those of
     * the single store.
     */
    private static List<Workload.Target> targets() {
        String names = System.getProperty("checker.targets", "");
        if (names.isBlank()) {
            return Workload.Target.SINGLE;
        }
        return Stream.of(names.split(",")).map(String::trim).map(Workload.Target::valueOf).toList();
    }

    private void check(long seed, Workload.Target target) {
        check(seed, target, null);
    }

    private Checker.Result run(long seed, Workload.Target target) {
        return run(Workload.generate(seed, target, steps(seed, target), Known.avoided()), Checker.name(seed, target), true);
    }

    /**
     * Runs a workload on fresh state (Valkey flushed: a rerun of a seed uses the same keys),
     * saying what it did unless it is one of a shrinking's many reruns.
     */
    private Checker.Result run(Workload workload, String name, boolean say) {
        ValkeyCluster on = workload.target().cluster() ? cluster() : null;
        ValkeySentinels under = workload.sentinel() ? sentinels() : null;
        if (on != null) {
            on.flushAll();
        } else if (under != null) {
            under.flushAll();
        } else if (workload.valkey()) {
            valkey.flushAll();
        }
        Checker.Result result = Checker.run(workload, valkey, on, under, name, UnaryOperator.identity());
        if (say) {
            System.out.println("checker: " + result.summary());
        }
        return result;
    }

    private void check(long seed, Workload.Target target, String context) {
        verify(run(seed, target), context);
    }

    /** Fails with the report, and the shrunk workload, of a run that broke an invariant. */
    private void verify(Checker.Result result, String context) {
        String report = "";
        if (!result.passed()) {
            report = result.report();
            if (Shrinker.RUNS > 0) {
                Shrinker shrinker = new Shrinker((w, name) -> run(w, name, false), Shrinker.RUNS, Shrinker.TIME);
                report += "\n" + shrinker.shrink(result).report();
            }
        }
        assertThat(result.passed()).as("%s%s", context == null ? "" : "caught in " + context + ":\n", report).isTrue();
    }
}
