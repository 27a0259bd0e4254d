package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.it.ValkeyCluster;
import dev.ratelimit.it.ValkeySentinels;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.it.ValkeyServer;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * One run: a seed's workload on a target, its history recorded, the invariants checked. A run
 * that breaks none deletes its history; one that breaks any keeps it and says, for the first
 * violation, the seed, the invariant and the events of that rule and key in the interval that
 * shows it.
 */
final class Checker {

    /** Where histories are written: kept for runs that fail. */
    static final Path HISTORIES = Path.of("target", "checker");
    /** Most lines of history in a failure message. */
    static final int EXCERPT_LINES = 80;

    private Checker() {
    }

    /**
     * What a run did and found.
     *
     * @param workload   what ran
     * @param violations what broke, in order
     * @param file       the history file (deleted when nothing broke)
     * @param excerpt    the events that show the first violation
     * @param stats      counts of what happened, to show the run did something
     * @param millis     real time taken
     * @param firstOps   the first operation's number of each step, in step order
     */
    record Result(Workload workload, List<Violation> violations, Path file, List<String> excerpt,
                  Map<String, Integer> stats, long millis, List<Long> firstOps) {

        /**
         * The step an operation belongs to.
         *
         * @param op the operation's number (a violation's)
         * @return the index of its step in the workload
         */
        int step(long op) {
            int step = 0;
            while (step + 1 < firstOps.size() && firstOps.get(step + 1) <= op) {
                step++;
            }
            return step;
        }

        /** Whether every invariant held. */
        boolean passed() {
            return violations.isEmpty();
        }

        /** A failure message: seed, invariant, excerpt, file. */
        String report() {
            StringBuilder out = new StringBuilder();
            out.append("seed ").append(workload.seed()).append(" on ").append(workload.target())
                    .append(" (deny cache ").append(workload.denyCache() ? "on" : "off").append("): ")
                    .append(violations.size()).append(" violation(s); the first:\n  ").append(violations.get(0))
                    .append("\nThe events of that rule and key in the interval that shows it (client ms ")
                    .append(violations.get(0).from()).append(" to ").append(violations.get(0).to()).append("):\n");
            for (String line : excerpt) {
                out.append("  ").append(line).append('\n');
            }
            if (violations.size() > 1) {
                out.append("All violations (first line each):\n");
                violations.stream().limit(20).forEach(v -> out.append("  op ").append(v.op()).append(' ')
                        .append(v.domain()).append(' ').append(v.rule()).append('/').append(v.key()).append(' ')
                        .append(v.invariant()).append('\n'));
            }
            out.append("Whole history kept in ").append(file.toAbsolutePath()).append('\n');
            out.append("Rerun: -Dchecker.seed=").append(workload.seed());
            if (!Workload.Target.SINGLE.contains(workload.target())) {
                out.append(" -Dchecker.targets=").append(workload.target());
            }
            return out.toString();
        }

        /** One line of what the run did. */
        String summary() {
            return "seed " + workload.seed() + " " + workload.target() + (workload.resilient()
                    ? " (deny cache " + (workload.denyCache() ? "on" : "off") + ")" : "") + ": " + stats + " in "
                    + millis + " ms";
        }
    }

    /**
     * Runs a seed on a target, steering clear of the given open defects, and checks its history.
     *
     * @param seed    the seed
     * @param target  where
     * @param steps   how many steps
     * @param valkey  the server, for Valkey targets
     * @param avoided the open defects the workload avoids
     * @return the result
     */
    static Result run(long seed, Workload.Target target, int steps, ValkeyServer valkey, Set<Known> avoided) {
        return run(Workload.generate(seed, target, steps, avoided), valkey, null, name(seed, target),
                UnaryOperator.identity());
    }

    /**
     * The name of a seed's history on a target, without extension.
     *
     * @param seed   the seed
     * @param target where it ran
     * @return {@code <seed>-<target>}
     */
    static String name(long seed, Workload.Target target) {
        return seed + "-" + target.name().toLowerCase();
    }

    /**
     * Runs a workload (drawn, shrunk or replayed) and checks its history.
     *
     * @param workload what to run
     * @param valkey   the server, for single Valkey targets
     * @param cluster  the cluster, for cluster targets
     * @param name     the history's file name without extension, in {@link #HISTORIES}
     * @param beneath  wraps the shared store before it is recorded: identity, except in tests
     *                 of the checker itself that put a defect there on purpose
     * @return the result
     */
    static Result run(Workload workload, ValkeyServer valkey, ValkeyCluster cluster, String name,
                      UnaryOperator<RateLimiter> beneath) {
        return run(workload, valkey, cluster, null, name, beneath);
    }

    /**
     * Runs a workload (drawn, shrunk or replayed) on any store and checks its history.
     *
     * @param workload  what to run
     * @param valkey    the server, for single Valkey targets
     * @param cluster   the cluster, for cluster targets
     * @param sentinels the Sentinel-managed primary and replica, for Sentinel targets
     * @param name      the history's file name without extension, in {@link #HISTORIES}
     * @param beneath   wraps the shared store before it is recorded (see above)
     * @return the result
     */
    static Result run(Workload workload, ValkeyServer valkey, ValkeyCluster cluster, ValkeySentinels sentinels,
                      String name, UnaryOperator<RateLimiter> beneath) {
        long began = System.nanoTime();
        History history = new History(HISTORIES, name);
        try {
            List<Long> firstOps;
            try (Target on = new Target(workload, valkey, cluster, sentinels, history, beneath)) {
                firstOps = new Runner(workload, on, history).run();
            }
            List<Event> events = history.events();
            List<Violation> violations = Invariants.check(events);
            long millis = (System.nanoTime() - began) / 1_000_000;
            if (violations.isEmpty()) {
                history.discard();
                return new Result(workload, violations, history.file(), List.of(), stats(events), millis, firstOps);
            }
            history.close();
            return new Result(workload, violations, history.file(),
                    history.excerpt(shows(events, violations.get(0)), EXCERPT_LINES), stats(events), millis, firstOps);
        } catch (RuntimeException | Error e) {
            history.close();
            throw new AssertionError("seed " + workload.seed() + " on " + workload.target() + " could not run; history "
                    + "kept in " + history.file().toAbsolutePath(), e);
        }
    }

    /**
     * The events that show a violation: the operations on its rule and key whose time is within
     * its interval (with what happened beneath them), settlements of their reservations, the
     * rule's edits, and faults.
     */
    static Predicate<Event> shows(List<Event> events, Violation violation) {
        Map<Long, Boolean> ours = new HashMap<>();
        Map<Long, Boolean> shown = new HashMap<>();
        for (Event event : events) {
            if (event instanceof Event.Call call) {
                boolean concerns = call.claims().stream().anyMatch(c -> concerns(c, violation));
                ours.put(call.op(), concerns);
                shown.put(call.op(), concerns && (call.at() >= violation.from() && call.at() <= violation.to()
                        || call.op() == violation.op()));
            } else if (event instanceof Event.Settled settled && ours.getOrDefault(settled.reservation(), false)
                    && settled.at() >= violation.from() && settled.at() <= violation.to()
                    && settled.op() <= violation.op()) {
                // A reservation settled within the interval: how it was taken shows it too.
                shown.put(settled.reservation(), true);
            }
        }
        return event -> {
            if (event.op() > violation.op()) {
                return false; // what came after cannot show it
            }
            boolean inInterval = event.at() >= violation.from() && event.at() <= violation.to();
            if (event instanceof Event.RuleSet set) {
                return set.rule().name().equals(violation.rule());
            }
            if (event instanceof Event.Fault fault) {
                return inInterval && (fault.rule() == null || fault.rule().equals(violation.rule()));
            }
            if (event instanceof Event.Settled settled) {
                return ours.getOrDefault(settled.reservation(), false)
                        && (inInterval || shown.getOrDefault(settled.reservation(), false));
            }
            return shown.getOrDefault(event.op(), false);
        };
    }

    private static boolean concerns(Claim claim, Violation violation) {
        return claim.rule().name().equals(violation.rule()) && claim.key().equals(violation.key());
    }

    static Map<String, Integer> stats(List<Event> events) {
        Map<String, Integer> stats = new java.util.LinkedHashMap<>();
        for (Event event : events) {
            String name = null;
            if (event instanceof Event.Decided decided) {
                name = decided.decisions().allowed() ? "allowed" : "rejected";
                if (!decided.decisions().delay().isZero()) {
                    stats.merge("delayed", 1, Integer::sum);
                }
            } else if (event instanceof Event.Failed) {
                name = "threw";
            } else if (event instanceof Event.StoreCall store && !store.answered()) {
                name = store.unreadable() != null ? "unreadable" : store.refused() ? "refused" : "lost";
            } else if (event instanceof Event.Settled) {
                name = "settled";
            } else if (event instanceof Event.RuleSet set && set.why().equals("edit")) {
                name = "edits";
            } else if (event instanceof Event.Fault fault) {
                name = fault.kind();
            }
            if (name != null) {
                stats.merge(name, 1, Integer::sum);
            }
        }
        return stats;
    }
}
