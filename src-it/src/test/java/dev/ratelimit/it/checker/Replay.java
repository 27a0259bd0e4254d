package dev.ratelimit.it.checker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A kept workload, written so that it can be run again ({@code -Dchecker.replay=<file>}).
 * A workload file ({@code <seed>-<target>.workload.jsonl}) is a first line naming the seed,
 * target, steps drawn and defects avoided (what draws the rules, policies and clock again),
 * then one line of JSON per step ({@link Steps}): so a shrunk workload, whose steps are no
 * longer those of its seed, runs as it was kept. A history ({@code <seed>-<target>.jsonl})
 * can be replayed too when its steps are all those drawn: its first line says the same.
 */
final class Replay {

    private Replay() {
    }

    /**
     * Writes a workload's file.
     *
     * @param workload what ran
     * @param file     where to write it
     * @return the file
     */
    static Path write(Workload workload, Path file) {
        List<String> lines = new ArrayList<>();
        lines.add(Json.object().with("workload", 1).with("seed", workload.seed()).with("target", workload.target().name())
                .with("drawn", workload.drawn()).with("avoided", names(workload.avoided()))
                .with("steps", workload.steps().size()).toString());
        for (Op step : workload.steps()) {
            lines.add(Steps.json(step).toString());
        }
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            return Files.write(file, lines);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the workload to " + file.toAbsolutePath(), e);
        }
    }

    /**
     * Reads a workload back from its file, or from a history of a whole drawn workload.
     *
     * @param file a {@code .workload.jsonl} or a history
     * @return the workload, as it ran
     * @throws IllegalArgumentException naming the file, when it is neither, or a history of a
     *                                  shrunk workload (replay its workload file instead)
     */
    static Workload read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("checker.replay: cannot read " + file.toAbsolutePath(), e);
        }
        if (lines.isEmpty()) {
            throw new IllegalArgumentException("checker.replay: " + file.toAbsolutePath() + " is empty");
        }
        Map<String, Object> head = JsonReader.object(lines.get(0));
        if (head.containsKey("workload")) {
            Workload drawn = draw(head, file);
            List<Op> steps = new ArrayList<>();
            for (String line : lines.subList(1, lines.size())) {
                if (!line.isBlank()) {
                    steps.add(Steps.op(JsonReader.object(line)));
                }
            }
            return drawn.withSteps(steps);
        }
        if ("start".equals(head.get("type")) && head.get("options") instanceof Map<?, ?> options) {
            @SuppressWarnings("unchecked")
            Map<String, Object> fields = new java.util.LinkedHashMap<>((Map<String, Object>) options);
            fields.put("seed", head.get("seed"));
            fields.put("target", head.get("target"));
            fields.putIfAbsent("drawn", fields.get("steps"));
            if (!fields.get("drawn").equals(fields.get("steps"))) {
                throw new IllegalArgumentException("checker.replay: " + file.toAbsolutePath() + " is the history of a "
                        + "shrunk workload (" + fields.get("steps") + " of " + fields.get("drawn") + " steps): replay "
                        + "its .workload.jsonl");
            }
            return draw(fields, file);
        }
        throw new IllegalArgumentException("checker.replay: " + file.toAbsolutePath() + " is neither a workload "
                + "(first line with \"workload\") nor a history (first line of type start): " + lines.get(0));
    }

    /** The workload the seed draws with the header's steps and avoided defects. */
    private static Workload draw(Map<String, Object> head, Path file) {
        try {
            long seed = ((Number) head.get("seed")).longValue();
            Workload.Target target = Workload.Target.valueOf(String.valueOf(head.get("target")));
            int drawn = ((Number) head.get("drawn")).intValue();
            Set<Known> avoided = EnumSet.noneOf(Known.class);
            for (Object name : (List<?>) head.get("avoided")) {
                try {
                    avoided.add(Known.valueOf(String.valueOf(name)));
                } catch (IllegalArgumentException fixed) {
                    // A defect fixed since is gone from Known: the steps run as drawn, said so.
                    System.out.println("checker.replay: " + name + " is no longer an open defect, not avoided");
                }
            }
            return Workload.generate(seed, target, drawn, avoided);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("checker.replay: the first line of " + file.toAbsolutePath()
                    + " needs seed, target, drawn (or steps) and avoided: " + head, e);
        }
    }

    private static List<String> names(Set<Known> avoided) {
        return avoided.stream().map(Enum::name).sorted().toList();
    }
}
