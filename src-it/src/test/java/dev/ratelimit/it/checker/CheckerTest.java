package dev.ratelimit.it.checker;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The invariant checker in the build: random mixed workloads on the in-process limiter and on
 * a real Valkey (client clock), with and without the resilient layer, their histories checked
 * against every algorithm's promises ({@link Invariants}). A fixed set of seeds and one random
 * seed, printed, run in {@code ./mvnw verify}; a violation fails with the seed, the invariant,
 * the events that show it and the kept history file.
 *
 * <p>Long runs, any seed, as long as wanted: {@code -Dchecker.seconds=3600} (seeds from
 * {@code -Dchecker.seed}, else a random one, each on every target, until the time is up or a
 * run fails); {@code -Dchecker.seed=N} alone reruns seed N on every target.
 * {@code -Dchecker.keepGoing=true} makes a long run go on past failing runs and list them all,
 * {@code -Dchecker.targets=VALKEY,...} limits the targets of a long run, {@code -Dchecker.steps}
 * sets the steps per run, {@code -Dchecker.expose=ALL} stops avoiding the open defects
 * ({@link Known}).
 */
@ExtendWith(ValkeyExtension.class)
class CheckerTest {

    /** Steps per run in the build: a few seconds per run on a busy two-core machine. */
    private static final int STEPS = Integer.getInteger("checker.steps", 1_500);
    private static final long[] SEEDS = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

    private final ValkeyServer valkey;

    CheckerTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    static Stream<Arguments> fixed() {
        List<Arguments> runs = new ArrayList<>();
        for (long seed : SEEDS) {
            for (Workload.Target target : Workload.Target.values()) {
                runs.add(Arguments.of(seed, target));
            }
        }
        return runs.stream();
    }

    @ParameterizedTest(name = "seed {0} on {1}")
    @MethodSource("fixed")
    void fixedSeedsKeepEveryPromise(long seed, Workload.Target target) {
        check(seed, target);
    }

    /**
     * The open defects ({@link Known}) are still there: each one's seed, with that defect alone
     * exposed, still breaks an invariant. When this fails for one, it was fixed: delete its entry
     * in {@link Known}, and the workload exercises it from then on.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Known.class, mode = EnumSource.Mode.EXCLUDE, names = {"LOCAL_RULE_SHADOW_MISMATCH", "RETRY_AFTER_BEFORE_FULL"})
    void openDefectsAreStillFound(Known defect) {
        Set<Known> avoided = EnumSet.allOf(Known.class);
        avoided.remove(defect);
        Checker.Result result = Checker.run(defect.seed(), defect.target(), 1_500, valkey, avoided);
        assertThat(result.violations()).as("%s is no longer found by seed %d on %s: if it was fixed, delete its "
                + "entry in Known", defect, defect.seed(), defect.target()).isNotEmpty();
        System.out.println("checker: open defect " + defect + " still found: " + result.violations().get(0));
        result.file().toFile().delete();
    }

    /**
     * One more seed on every target, as the run asks: a random one, printed (the default, in
     * every build); {@code -Dchecker.seed=N} alone reruns that seed; {@code -Dchecker.seconds=S}
     * runs seeds one after another for that long (from {@code checker.seed}, or a random one).
     */
    @Test
    void theChosenSeedsKeepEveryPromise() {
        if (Long.getLong("checker.seconds") != null) {
            longRun();
            return;
        }
        Long given = Long.getLong("checker.seed");
        long seed = given != null ? given : ThreadLocalRandom.current().nextLong(1_000, 1_000_000_000);
        if (given == null) {
            System.out.println("checker: random seed " + seed + " (rerun with -Dchecker.seed=" + seed + ")");
        }
        for (Workload.Target target : Workload.Target.values()) {
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
                    caught.add(context + ": seed " + seed + " " + target + " " + v.domain() + " " + v.rule() + ": "
                            + v.invariant());
                    System.out.println("checker: caught in " + caught.get(caught.size() - 1));
                }
            }
        }
        System.out.println("checker: " + runs + " runs in " + (System.nanoTime() - began) / 1_000_000_000 + " s, "
                + caught.size() + " failed");
        assertThat(caught).as("runs that broke an invariant (-Dchecker.keepGoing)").isEmpty();
    }

    /** The targets of a long run: {@code -Dchecker.targets=VALKEY,LOCAL_RESILIENT}, else all. */
    private static List<Workload.Target> targets() {
        String names = System.getProperty("checker.targets", "");
        if (names.isBlank()) {
            return List.of(Workload.Target.values());
        }
        return Stream.of(names.split(",")).map(String::trim).map(Workload.Target::valueOf).toList();
    }

    private void check(long seed, Workload.Target target) {
        check(seed, target, null);
    }

    private Checker.Result run(long seed, Workload.Target target) {
        if (target == Workload.Target.VALKEY || target == Workload.Target.VALKEY_RESILIENT) {
            valkey.flushAll();
        }
        Checker.Result result = Checker.run(seed, target, STEPS, valkey);
        System.out.println("checker: " + result.summary());
        return result;
    }

    private void check(long seed, Workload.Target target, String context) {
        Checker.Result result = run(seed, target);
        assertThat(result.passed()).as("%s%s", context == null ? "" : "caught in " + context + ":\n",
                result.violations().isEmpty() ? "" : result.report()).isTrue();
    }
}
