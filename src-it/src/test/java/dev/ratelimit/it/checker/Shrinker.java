package dev.ratelimit.it.checker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Predicate;

/**
 * Shrinks a failing workload: runs it again with steps removed and keeps a shorter workload
 * whenever it still breaks the same invariant (same invariant, rule and domain; the key and
 * numbers may differ). First the steps after the one that broke it (they cannot have caused
 * it), then everything naming other rules and keys at once, then halves, quarters and smaller
 * chunks down to single steps (delta debugging); then each step made smaller (a call without
 * one of its claims, a stall without one of the calls sent into it or after it) and chunks
 * again, until no single step or part can go or the budget
 * (reruns, time) is spent. Faults and clock moves are steps like any other. Runs with Valkey
 * faults depend on timing: a candidate is kept only when its own run failed, so the result is
 * always a workload that was seen failing, with its history.
 *
 * <p>The smallest workload's history is kept beside the original as
 * {@code <name>.shrunk.jsonl}, its steps as {@code <name>.workload.jsonl} ({@link Replay}).
 */
final class Shrinker {

    /**
     * Default most reruns: {@code -Dchecker.shrinkRuns}, 0 for none. An in-process run of a
     * shrinking takes a few ms, and shrinking one to a dozen steps took from 281 to over 500
     * reruns; on Valkey a run takes seconds and the time bound ends it first.
     */
    static final int RUNS = Integer.getInteger("checker.shrinkRuns", 2_000);
    /** Default most time: {@code -Dchecker.shrinkSeconds}. */
    static final Duration TIME = Duration.ofSeconds(Long.getLong("checker.shrinkSeconds", 60));
    private final BiFunction<Workload, String, Checker.Result> trial;
    private final int maxRuns;
    private final Duration maxTime;

    /**
     * A shrinker.
     *
     * @param trial   runs a workload into the named history (fresh state each time) and checks it
     * @param maxRuns most reruns
     * @param maxTime most time in all
     */
    Shrinker(BiFunction<Workload, String, Checker.Result> trial, int maxRuns, Duration maxTime) {
        this.trial = trial;
        this.maxRuns = maxRuns;
        this.maxTime = maxTime;
    }

    /**
     * Shrinks a failing run.
     *
     * @param failed a run that broke an invariant
     * @return the shortest workload seen breaking the same one, with its files
     */
    Shrunk shrink(Checker.Result failed) {
        Search search = new Search(failed);
        search.cutAfterViolation();
        search.focus();
        boolean done = search.chop();
        while (done && search.inside()) {
            done = search.chop(); // smaller steps may let more steps go
        }
        done = done && search.budgetLeft(); // else the last look inside may have stopped early
        if (search.smallest == failed) {
            copy(failed.file(), search.kept); // nothing shorter failed: the original is the smallest seen
        }
        Path workload = Replay.write(search.smallest.workload(),
                failed.file().resolveSibling(search.name + ".workload.jsonl"));
        return new Shrunk(failed, search.smallest, search.violation, search.runs,
                (System.nanoTime() - search.began) / 1_000_000, done, search.kept, workload);
    }

    /** One shrinking: the smallest failing run so far, and the budget spent. */
    private final class Search {
        private final long began = System.nanoTime();
        private final Violation wanted;
        private final String name;
        private final Path kept;
        private Checker.Result smallest;
        private Violation violation;
        private int runs;

        Search(Checker.Result failed) {
            this.wanted = failed.violations().get(0);
            this.name = failed.file().getFileName().toString().replaceFirst("\\.jsonl$", "");
            this.kept = failed.file().resolveSibling(name + ".shrunk.jsonl");
            this.smallest = failed;
            this.violation = wanted;
        }

        List<Op> steps() {
            return smallest.workload().steps();
        }

        boolean budgetLeft() {
            return runs < maxRuns && System.nanoTime() - began < maxTime.toNanos();
        }

        /** The steps after the one that broke the invariant cannot matter: tried without them. */
        void cutAfterViolation() {
            int last = smallest.step(violation.op());
            if (last + 1 < steps().size() && budgetLeft()) {
                keepIfSame(new ArrayList<>(steps().subList(0, last + 1)));
            }
        }

        /**
         * Big cuts first, each one run: the steps that name the violation's rule and key, with
         * everything that names no rule or key (clock moves, settlements, retries, faults), or
         * failing that those that name its rule on any key; then without every step of a kind
         * that rarely matters (peeks, clock moves of 0 ms, edits and resets of other rules).
         */
        void focus() {
            // Rules are named r0, r1...; a violation of no rule (an instance that never reached
            // a new primary) has none to keep, and every rule's edits and resets are "other".
            int rule = wanted.rule().matches("r\\d+") ? Integer.parseInt(wanted.rule().substring(1)) : -1;
            for (String key : new String[] {wanted.key(), null}) {
                if (rule < 0 || cut(s -> !names(s, rule, key))) {
                    break;
                }
            }
            cut(s -> s instanceof Op.Peek || s instanceof Op.Inspect);
            cut(s -> s instanceof Op.Advance advance && advance.how().equals("zero"));
            cut(s -> s instanceof Op.Edit edit && edit.rule() != rule);
            cut(s -> s instanceof Op.Reset reset && reset.claim().rule() != rule);
            cut(s -> s instanceof Op.OperatorReset reset && reset.claim().rule() != rule);
        }

        /** Tries without every step that matches, if that leaves any. */
        private boolean cut(Predicate<Op> which) {
            List<Op> kept = steps().stream().filter(which.negate()).toList();
            return kept.size() < steps().size() && !kept.isEmpty() && budgetLeft() && keepIfSame(kept);
        }

        /** Halves, quarters... down to single steps, until no single step can go. */
        boolean chop() {
            int chunk = Math.max(1, steps().size() / 2);
            while (budgetLeft()) {
                boolean removed = false;
                for (int i = 0; i < steps().size() && budgetLeft(); ) {
                    List<Op> fewer = new ArrayList<>(steps().subList(0, i));
                    fewer.addAll(steps().subList(Math.min(steps().size(), i + chunk), steps().size()));
                    if (!fewer.isEmpty() && keepIfSame(fewer)) {
                        removed = true; // the same i is now the next chunk
                    } else {
                        i += chunk;
                    }
                }
                if (chunk == 1 && !removed) {
                    return budgetLeft();
                }
                chunk = Math.max(1, Math.min(chunk / 2, steps().size() / 2));
            }
            return false;
        }

        /**
         * Each step made smaller, one part at a time: a call without one of its claims, a stall
         * without one of the steps sent into it or after it.
         *
         * @return whether any part could go
         */
        boolean inside() {
            boolean removed = false;
            for (int i = 0; i < steps().size() && budgetLeft(); i++) {
                for (int j = 0; i < steps().size() && j < parts(steps().get(i)) && budgetLeft(); ) {
                    List<Op> fewer = new ArrayList<>(steps());
                    fewer.set(i, without(steps().get(i), j));
                    if (keepIfSame(fewer)) {
                        removed = true;
                    } else {
                        j++;
                    }
                }
            }
            return removed;
        }

        /** Runs the steps; keeps them, and their history, if they break the same invariant. */
        boolean keepIfSame(List<Op> steps) {
            Checker.Result candidate = attempt(smallest.workload().withSteps(steps), name + ".shrinking");
            runs++;
            Violation same = candidate == null ? null : same(candidate, wanted);
            if (same == null) {
                delete(kept.resolveSibling(name + ".shrinking.jsonl")); // passed, or failed otherwise
                return false;
            }
            move(candidate.file(), kept);
            smallest = candidate;
            violation = same;
            cutAfterViolation();
            return true;
        }
    }

    /** How many parts {@link #without} can take out of a step: a call's claims (one stays), a stall's, burst's or failover's steps. */
    private static int parts(Op step) {
        if (step instanceof Op.Take take) {
            return take.claims().size() > 1 ? take.claims().size() : 0;
        }
        if (step instanceof Op.Burst burst) {
            return burst.during().size();
        }
        if (step instanceof Op.Failover failover) {
            return failover.during().size();
        }
        return step instanceof Op.Stall stall ? stall.during().size() + stall.after().size() : 0;
    }

    /** A step without its {@code j}-th part. */
    private static Op without(Op step, int j) {
        if (step instanceof Op.Take take) {
            List<Op.ClaimSpec> claims = new ArrayList<>(take.claims());
            claims.remove(j);
            return new Op.Take(take.reserve(), claims);
        }
        if (step instanceof Op.Burst burst) {
            List<Op> during = new ArrayList<>(burst.during());
            during.remove(j);
            return new Op.Burst(burst.resets(), burst.errors(), during);
        }
        if (step instanceof Op.Failover failover) {
            List<Op> during = new ArrayList<>(failover.during());
            during.remove(j);
            return new Op.Failover(during, failover.probe());
        }
        Op.Stall stall = (Op.Stall) step;
        List<Op> during = new ArrayList<>(stall.during());
        List<Op> after = new ArrayList<>(stall.after());
        if (j < during.size()) {
            during.remove(j);
        } else {
            after.remove(j - during.size());
        }
        return new Op.Stall(stall.millis(), during, after);
    }

    /** Whether a step may matter to a rule and key (any key when null). */
    private static boolean names(Op step, int rule, String key) {
        if (step instanceof Op.Take take) {
            return take.claims().stream().anyMatch(c -> names(c, rule, key));
        } else if (step instanceof Op.Peek peek) {
            return names(peek.claim(), rule, key);
        } else if (step instanceof Op.Reset reset) {
            return names(reset.claim(), rule, key);
        } else if (step instanceof Op.OperatorReset reset) {
            return names(reset.claim(), rule, key);
        } else if (step instanceof Op.Inspect inspect) {
            return names(inspect.claim(), rule, key);
        } else if (step instanceof Op.Probe probe) {
            return names(probe.claim(), rule, key);
        } else if (step instanceof Op.Edit edit) {
            return edit.rule() == rule;
        } else if (step instanceof Op.Plant plant) {
            return plant.rule() == rule && (key == null || plant.key().equals(key));
        } else if (step instanceof Op.Unplant unplant) {
            return unplant.rule() == rule && (key == null || unplant.key().equals(key));
        }
        return true; // clock moves, settlements, retries, stalls, flushes, restarts, client faults, crowds, failovers
    }

    private static boolean names(Op.ClaimSpec claim, int rule, String key) {
        return claim.rule() == rule && (key == null || claim.key().equals(key));
    }

    /** A candidate's run, or null when it could not run (what the original did not show). */
    private Checker.Result attempt(Workload candidate, String name) {
        try {
            return trial.apply(candidate, name);
        } catch (AssertionError | RuntimeException e) {
            return null;
        }
    }

    /** The candidate's violation of the same kind as the wanted one, or null. */
    private static Violation same(Checker.Result candidate, Violation wanted) {
        return candidate.violations().stream()
                .filter(v -> v.invariant().equals(wanted.invariant()) && v.rule().equals(wanted.rule())
                        && v.domain().equals(wanted.domain()))
                .findFirst().orElse(null);
    }

    private static long elapsed(long began) {
        return System.nanoTime() - began;
    }

    private static void move(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the shrunk history " + to.toAbsolutePath(), e);
        }
    }

    private static void copy(Path from, Path to) {
        try {
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the shrunk history " + to.toAbsolutePath(), e);
        }
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + file.toAbsolutePath(), e);
        }
    }
}
