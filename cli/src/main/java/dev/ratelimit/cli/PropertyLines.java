package dev.ratelimit.cli;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The lines of a {@code .properties} file each property is set on, keys read by
 * {@link Properties} itself (escapes, separators, continued lines), so that a property written
 * twice can be said with the file's own name and lines.
 */
final class PropertyLines {

    private PropertyLines() {
    }

    /**
     * Each property's lines, in the order first set.
     *
     * @param file a properties file, read as UTF-8 as MicroProfile Config reads it
     * @return property name to the lines (from 1) it is set on
     */
    static Map<String, List<Integer>> of(Path file) {
        List<String> lines;
        try {
            lines = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the settings file " + file.toAbsolutePath(), e);
        }
        Map<String, List<Integer>> set = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).stripLeading();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("!")) {
                continue;
            }
            // One entry: this line and those it continues onto (an odd number of '\' at the end).
            int first = i;
            StringBuilder entry = new StringBuilder(lines.get(i));
            while (continues(lines.get(i)) && i + 1 < lines.size()) {
                entry.append('\n').append(lines.get(++i));
            }
            for (String name : keys(entry.toString())) {
                set.computeIfAbsent(name, n -> new ArrayList<>()).add(first + 1);
            }
        }
        return set;
    }

    /**
     * Warnings for the properties set more than once: MicroProfile Config reads the last.
     *
     * @param file the file, as named to the operator
     * @param set  its properties' lines
     * @return one line each, e.g. {@code FILE: ratelimit.rule.api.limit is set on lines 4 and 15; the last is read}
     */
    static List<String> duplicates(Path file, Map<String, List<Integer>> set) {
        return set.entrySet().stream().filter(e -> e.getValue().size() > 1).map(e -> {
            List<Integer> at = e.getValue();
            String listed = at.subList(0, at.size() - 1).stream().map(String::valueOf).collect(Collectors.joining(", "))
                    + " and " + at.get(at.size() - 1);
            return file.toAbsolutePath() + ": " + e.getKey() + " is set on lines " + listed + "; the last is read";
        }).toList();
    }

    private static boolean continues(String line) {
        int backslashes = 0;
        for (int i = line.length() - 1; i >= 0 && line.charAt(i) == '\\'; i--) {
            backslashes++;
        }
        return backslashes % 2 == 1;
    }

    private static List<String> keys(String entry) {
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(entry));
        } catch (IOException | IllegalArgumentException e) {
            // A malformed \\u escape: not this reading's to say; MicroProfile Config reads the file.
            return List.of();
        }
        return List.copyOf(properties.stringPropertyNames());
    }
}
