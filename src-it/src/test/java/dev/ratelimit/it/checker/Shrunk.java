package dev.ratelimit.it.checker;

import dev.ratelimit.FailurePolicy;
import dev.ratelimit.Rule;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What shrinking found ({@link Shrinker}).
 *
 * @param original  the failing run shrunk
 * @param smallest  the shortest run seen failing the same way (the original if none was)
 * @param violation its violation of the same kind as the original's first
 * @param runs      reruns made
 * @param millis    time taken
 * @param done      true when no single step could go, false when the budget ran out
 * @param history   the smallest run's history
 * @param workload  the smallest workload's file, for {@code -Dchecker.replay}
 */
record Shrunk(Checker.Result original, Checker.Result smallest, Violation violation, int runs, long millis,
              boolean done, Path history, Path workload) {

    /** Most lines of steps printed; all are in the workload file. */
    private static final int PRINTED_STEPS = 120;

    /**
     * What to print: the steps left, the violation, the files.
     *
     * @return lines for a failure message
     */
    String report() {
        int from = original.workload().steps().size();
        List<Op> steps = smallest.workload().steps();
        StringBuilder out = new StringBuilder();
        out.append("Shrunk from ").append(from).append(" to ").append(steps.size()).append(" steps in ").append(runs)
                .append(" reruns, ").append(millis / 1_000).append(" s (")
                .append(done ? "no single step can go" : "budget spent: -Dchecker.shrinkRuns, -Dchecker.shrinkSeconds")
                .append("); it still breaks:\n  ").append(violation).append('\n');
        Workload shrunk = smallest.workload();
        out.append("The shrunk workload, seed ").append(shrunk.seed()).append(" on ").append(shrunk.target())
                .append(shrunk.resilient() ? " (deny cache " + (shrunk.denyCache() ? "on" : "off") + ")" : "")
                .append(", its rules as drawn:\n");
        for (Rule rule : shrunk.rules()) {
            FailurePolicy policy = shrunk.policies().get(rule.name());
            out.append("  ").append(Event.ruleJson(rule)).append(!shrunk.resilient() ? ""
                    : " policy " + policy.kind().name().toLowerCase()
                    + (policy instanceof FailurePolicy.Local local ? " " + Event.ruleJson(local.rule()) : ""))
                    .append('\n');
        }
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            List<String> step = Steps.lines(steps.get(i));
            lines.add(String.format("%4d. %s", i + 1, step.get(0)));
            step.subList(1, step.size()).forEach(l -> lines.add("      " + l));
        }
        lines.stream().limit(PRINTED_STEPS).forEach(l -> out.append("  ").append(l).append('\n'));
        if (lines.size() > PRINTED_STEPS) {
            out.append("  ... ").append(lines.size() - PRINTED_STEPS).append(" more lines, all in the workload file\n");
        }
        out.append("Shrunk history kept in ").append(history.toAbsolutePath()).append('\n');
        out.append("Replay the shrunk workload: -Dchecker.replay=").append(workload.toAbsolutePath());
        return out.toString();
    }
}
