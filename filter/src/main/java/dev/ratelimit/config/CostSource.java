package dev.ratelimit.config;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a rule finds a request's actual cost once its response is complete
 * ({@code ratelimit.rule.<name>.cost-from}): a response header the application sets, or a
 * request attribute (for a streamed response, whose headers are gone before its cost is known).
 *
 * @param header whether it is a response header (else a request attribute)
 * @param name   the header's or attribute's name
 */
public record CostSource(boolean header, String name) {

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    /**
     * Reads {@code header:<name>} or {@code attribute:<name>}.
     *
     * @param value the setting's value
     * @return the source, or empty when the value is neither
     */
    public static Optional<CostSource> parse(String value) {
        String text = value.trim();
        if (text.startsWith("header:") && TOKEN.matcher(text.substring(7)).matches()) {
            return Optional.of(new CostSource(true, text.substring(7)));
        }
        if (text.startsWith("attribute:") && !text.substring(10).isBlank()) {
            return Optional.of(new CostSource(false, text.substring(10).trim()));
        }
        return Optional.empty();
    }

    /**
     * A reported cost as text (a header's value, an attribute's string): a whole number, 0 or more.
     *
     * @param text the text, or null when nothing was reported
     * @return the cost, or -1 when there is none or it is not a whole number of at most 18 digits
     */
    public static long parseCost(String text) {
        if (text == null) {
            return -1;
        }
        String digits = text.trim();
        if (digits.isEmpty() || digits.length() > 18) {
            return -1;
        }
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(digits);
    }

    @Override
    public String toString() {
        return (header ? "header:" : "attribute:") + name;
    }
}
