package dev.ratelimit.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Typed reads of settings from one source. Each read records the name as read (so that what
 * was never read can be reported as a typo) and any problem with its value, naming the
 * property, the value and the rule it breaks; a bad value reads as a harmless default so that
 * reading goes on and every problem is found at once.
 */
final class SettingsValues {

    /** The longest duration any setting takes: about 100 years, far inside every arithmetic on it. */
    private static final Duration MAX_DURATION = Duration.ofDays(36_500);

    private final SettingsSource source;
    private final List<String> problems = new ArrayList<>();
    private final Set<String> read = new HashSet<>();
    private final List<String> renamings = new ArrayList<>();
    // Each setting's default as the reader asks for it: the one definition the reference is held to.
    private final java.util.Map<String, String> defaults = new java.util.LinkedHashMap<>();

    SettingsValues(SettingsSource source) {
        this.source = source;
    }

    /**
     * The default of each setting read so far with one, as the settings reference writes it
     * ({@code true}, {@code 32}, {@code 50ms}, {@code draft}); a setting read without a default
     * (required, or optional with none) is not here.
     */
    java.util.Map<String, String> defaults() {
        return java.util.Collections.unmodifiableMap(defaults);
    }

    /** The source read from. */
    SettingsSource source() {
        return source;
    }

    /** The problems found so far, in order; the reader adds its own too. */
    List<String> problems() {
        return problems;
    }

    /** Every name read so far. */
    Set<String> read() {
        return read;
    }

    /** The warnings of old names read (see {@link #renamed}), in order. */
    List<String> renamings() {
        return renamings;
    }

    /**
     * The name a renamed setting is read by: the new one, or the old one while only it is set
     * (read so, with a warning naming both); both set is a problem, the new one read.
     *
     * @param name    the setting's name now
     * @param oldName its name before (see {@link SettingsReader#RENAMED})
     * @return the name to read
     */
    String renamed(String name, String oldName) {
        Optional<String> old = raw(oldName);
        if (old.isEmpty()) {
            return name;
        }
        // Asked again for the same setting (to name it in another problem), it says each thing once.
        if (raw(name).isPresent()) {
            String both = oldName + "='" + old.get() + "' is the old name of " + name + ", which is set too: remove "
                    + oldName;
            if (!problems.contains(both)) {
                problems.add(both);
            }
            return name;
        }
        String warning = oldName + " is an old name: rename it " + name + " (the old name is read until 2.0)";
        if (!renamings.contains(warning)) {
            renamings.add(warning);
        }
        return oldName;
    }

    Optional<String> raw(String name) {
        read.add(name);
        return source.get(name).map(String::trim).filter(v -> !v.isEmpty());
    }

    Optional<String> required(String name) {
        Optional<String> value = raw(name);
        if (value.isEmpty()) {
            problems.add(name + " is required");
        }
        return value;
    }

    List<String> list(String name) {
        return raw(name).map(v -> List.of(v.split(","))).orElse(List.of()).stream()
                .map(String::trim).filter(v -> !v.isEmpty()).toList();
    }

    boolean bool(String name, boolean defaultValue) {
        defaults.putIfAbsent(name, Boolean.toString(defaultValue));
        return raw(name).map(v -> switch (v.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> {
                problem(name, v, "must be true or false");
                yield defaultValue;
            }
        }).orElse(defaultValue);
    }

    long number(String name, long defaultValue, long min, long max) {
        defaults.putIfAbsent(name, Long.toString(defaultValue));
        return raw(name).map(v -> parseNumber(name, v, min, max)).orElse(defaultValue);
    }

    long parseNumber(String name, String value, long min, long max) {
        try {
            long n = Long.parseLong(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        problem(name, value, "must be a whole number " + (max == Long.MAX_VALUE ? "of at least " + min
                : "from " + min + " to " + max));
        return min;
    }

    Duration duration(String name, Duration defaultValue, Duration min) {
        if (defaultValue != null) {
            defaults.putIfAbsent(name, Durations.format(defaultValue));
        }
        return raw(name).map(v -> parseDuration(name, v, min)).orElse(defaultValue);
    }

    Duration parseDuration(String name, String value, Duration min) {
        Optional<Duration> parsed = Durations.parse(value);
        if (parsed.isEmpty()) {
            problem(name, value, "is not a duration: use e.g. 500ms, 30s, 15m, 1h, 1d or ISO-8601 (PT15M)");
            return min;
        }
        Duration d = parsed.get();
        if (d.compareTo(MAX_DURATION) > 0) {
            problem(name, value, "is too long: at most " + MAX_DURATION.toDays() + " days");
            return min;
        }
        if (d.compareTo(min) < 0 || d.getNano() % 1_000_000 != 0) {
            problem(name, value, "must be a whole number of milliseconds, at least " + min.toMillis() + " ms");
            return min;
        }
        return d;
    }

    String text(String name, String defaultValue, Pattern valid, String rule) {
        if (defaultValue != null) {
            defaults.putIfAbsent(name, defaultValue);
        }
        return raw(name).map(v -> {
            if (!valid.matcher(v).matches()) {
                problem(name, v, rule);
                return defaultValue;
            }
            return v;
        }).orElse(defaultValue);
    }

    String choice(String name, String defaultValue, List<String> choices) {
        if (defaultValue != null) {
            defaults.putIfAbsent(name, defaultValue);
        }
        return raw(name).map(v -> {
            String lower = v.toLowerCase(Locale.ROOT);
            if (!choices.contains(lower)) {
                problem(name, v, "must be one of " + String.join(", ", choices));
                return defaultValue;
            }
            return lower;
        }).orElse(defaultValue);
    }

    <E> E choice(String name, E defaultValue, E[] values, Function<E, String> id) {
        List<String> ids = java.util.Arrays.stream(values).map(id).toList();
        String chosen = choice(name, id.apply(defaultValue), ids);
        return values[ids.indexOf(chosen)];
    }

    List<UrlPattern> patterns(String name, String defaultValue) {
        List<String> texts = list(name);
        if (texts.isEmpty() && defaultValue != null) {
            texts = List.of(defaultValue);
        }
        List<UrlPattern> patterns = new ArrayList<>();
        for (String text : texts) {
            UrlPattern.parse(text).ifPresentOrElse(patterns::add, () -> problem(name, text,
                    "is not a servlet URL pattern: use /exact, /prefix/*, *.extension or /"));
        }
        return patterns;
    }

    void problem(String name, String value, String rule) {
        problems.add(name + "='" + value + "' " + rule);
    }
}
