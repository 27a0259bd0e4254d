package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shrinking and replaying, on the in-process limiter (the same run every time) with a defect
 * put beneath the recording on purpose: a store that charges every claim 1 unit whatever its
 * cost, as the deny cache once ignored the cost. The checker must catch it, shrink the
 * workload to a few steps that still break the same invariant, and replay the kept files.
 */
class ShrinkerTest {

    private static final long SEED = 1;
    private static final int STEPS = 400;

    /** The defect: every claim charged 1 unit, so a claim of 3 passes where only 1 is left. */
    private static final class CostBlindStore implements RateLimiter {
        private final RateLimiter store;

        CostBlindStore(RateLimiter store) {
            this.store = store;
        }

        private static List<Claim> one(List<Claim> claims) {
            return claims.stream().map(c -> Claim.of(c.rule(), c.key(), 1)).toList();
        }

        @Override
        public Decisions acquireAll(List<Claim> claims) {
            return store.acquireAll(one(claims));
        }

        @Override
        public Reservation reserveAll(List<Claim> claims) {
            return store.reserveAll(one(claims));
        }

        @Override
        public Decision peek(Rule rule, String key, long cost) {
            return store.peek(rule, key, cost);
        }

        @Override
        public void reset(Rule rule, String key) {
            store.reset(rule, key);
        }

        @Override
        public void close() {
            store.close();
        }
    }

    private static Checker.Result trial(Workload workload, String name) {
        return Checker.run(workload, null, null, name, CostBlindStore::new);
    }

    private static Workload drawn() {
        return Workload.generate(SEED, Workload.Target.LOCAL, STEPS, EnumSet.allOf(Known.class));
    }

    @Test
    void aFailingWorkloadShrinksToAFewStepsThatBreakTheSameInvariant() {
        Checker.Result failed = trial(drawn(), "shrinker-test");
        assertThat(failed.passed()).as("the cost-blind store must break an invariant in %d steps of seed %d", STEPS, SEED)
                .isFalse();
        Violation first = failed.violations().get(0);

        Shrunk shrunk = new Shrinker(ShrinkerTest::trial, 200, Shrinker.TIME).shrink(failed);
        System.out.println("checker: " + failed.summary() + "\n" + shrunk.report());

        assertThat(shrunk.done()).as("shrinking ends because no single step can go").isTrue();
        assertThat(shrunk.smallest().workload().steps()).hasSizeLessThanOrEqualTo(10);
        assertThat(shrunk.violation().invariant()).isEqualTo(first.invariant());
        assertThat(shrunk.violation().rule()).isEqualTo(first.rule());
        assertThat(shrunk.history()).exists().hasFileName("shrinker-test.shrunk.jsonl");
        assertThat(failed.file()).exists();
        assertThat(failed.file().resolveSibling("shrinker-test.shrinking.jsonl")).doesNotExist();

        // The kept workload replays as it was shrunk, and breaks the same invariant again.
        Workload replayed = Replay.read(shrunk.workload());
        assertThat(replayed.steps()).isEqualTo(shrunk.smallest().workload().steps());
        Checker.Result again = trial(replayed, "shrinker-test.replay");
        assertThat(again.violations()).anySatisfy(v -> {
            assertThat(v.invariant()).isEqualTo(first.invariant());
            assertThat(v.rule()).isEqualTo(first.rule());
        });
        // The history of a drawn workload replays it too: its first line says how to draw it.
        assertThat(Replay.read(failed.file()).steps()).isEqualTo(drawn().steps());
        assertThat(shrunk.history().toFile().delete() && failed.file().toFile().delete()
                && again.file().toFile().delete() && shrunk.workload().toFile().delete()).isTrue();
    }

    @Test
    void aCorrectStoreBreaksNothing() {
        Checker.Result result = Checker.run(drawn(), null, null, "shrinker-test.correct", UnaryOperator.identity());
        assertThat(result.violations()).isEmpty();
    }

    @Test
    void everyKindOfStepIsWrittenAndReadBack() {
        // Long Valkey workloads hold every kind of step: stalls, flushes, plants, edits... A burst
        // or a crowd only opens a workload, so a few seeds are needed to draw them all; a
        // failover is drawn only under Sentinel.
        Set<Class<?>> kinds = new HashSet<>();
        for (long seed = SEED; seed < SEED + 20; seed++) {
            Workload.Target target = seed % 2 == 0 ? Workload.Target.VALKEY_RESILIENT : Workload.Target.SENTINEL_RESILIENT;
            Workload workload = Workload.generate(seed, target, 3_000, EnumSet.allOf(Known.class));
            workload.steps().forEach(s -> collect(s, kinds));
            Workload shrunk = workload.withSteps(workload.steps().subList(0, 2_900));
            Workload back = Replay.read(Replay.write(shrunk, Checker.HISTORIES.resolve("shrinker-test.workload.jsonl")));
            assertThat(back.steps()).isEqualTo(shrunk.steps());
            assertThat(back.drawn()).isEqualTo(3_000);
            assertThat(back.clockStart()).isEqualTo(workload.clockStart());
            assertThat(back.denyCache()).isEqualTo(workload.denyCache());
            assertThat(back.avoided()).isEqualTo(workload.avoided());
            assertThat(back.instances()).isEqualTo(workload.instances());
            assertThat(back.breakerOpenMillis()).isEqualTo(workload.breakerOpenMillis());
            shrunk.steps().forEach(s -> assertThat(Steps.lines(s)).isNotEmpty());
        }
        assertThat(kinds).as("kinds of step drawn, nested ones included")
                .containsExactlyInAnyOrder(Op.class.getPermittedSubclasses());
        assertThat(Checker.HISTORIES.resolve("shrinker-test.workload.jsonl").toFile().delete()).isTrue();
    }

    /** A step's kind and those of the steps it holds. */
    private static void collect(Op step, Set<Class<?>> kinds) {
        kinds.add(step.getClass());
        if (step instanceof Op.Stall stall) {
            stall.during().forEach(s -> collect(s, kinds));
            stall.after().forEach(s -> collect(s, kinds));
        } else if (step instanceof Op.Burst burst) {
            burst.during().forEach(s -> collect(s, kinds));
        } else if (step instanceof Op.Failover failover) {
            failover.during().forEach(s -> collect(s, kinds));
        }
    }
}
