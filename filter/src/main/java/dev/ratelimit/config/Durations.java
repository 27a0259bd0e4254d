package dev.ratelimit.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as written in settings: {@code 500ms}, {@code 30s}, {@code 15m}, {@code 1h}, {@code 1d}, or ISO-8601 ({@code PT1M30S}). */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)");

    private Durations() {
    }

    /**
     * Parses a duration.
     *
     * @param text e.g. {@code 15m} or {@code PT15M}
     * @return the duration, or empty when the text is neither form
     */
    public static Optional<Duration> parse(String text) {
        String s = text.trim();
        Matcher m = SHORT.matcher(s);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return Optional.of(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            });
        }
        if (s.length() > 1 && (s.charAt(0) == 'P' || s.charAt(0) == 'p')) {
            try {
                return Optional.of(Duration.parse(s));
            } catch (DateTimeParseException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /**
     * A duration in the short form settings use, in the largest unit that divides it.
     *
     * @param duration a duration of whole milliseconds
     * @return e.g. {@code 100ms}, {@code 30s}, {@code 1h}
     */
    public static String format(Duration duration) {
        long ms = duration.toMillis();
        long[] sizes = {86_400_000, 3_600_000, 60_000, 1000};
        String[] units = {"d", "h", "m", "s"};
        for (int i = 0; i < sizes.length; i++) {
            if (ms != 0 && ms % sizes[i] == 0) {
                return ms / sizes[i] + units[i];
            }
        }
        return ms + "ms";
    }
}
