package dev.ratelimit.config;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a rule finds a request's actual cost once its work is done
 * ({@code ratelimit.rule.<name>.cost-from}): a response header the application sets, a request
 * attribute (for a streamed response, whose headers are gone before its cost is known), or what
 * an annotated method returned (a number, or a {@code CompletionStage} of one).
 *
 * @param kind where it is
 * @param name the header's or attribute's name; empty for what a method returned
 */
public record CostSource(Kind kind, String name) {

    /** Where a cost is reported. */
    public enum Kind {
        /** A response header: {@code header:<name>}. */
        HEADER,
        /** A request attribute: {@code attribute:<name>}. */
        ATTRIBUTE,
        /** What an annotated method returned: {@code returned} (scope=method rules only). */
        RETURNED
    }

    /** The largest cost read: 18 digits, as for text. */
    private static final java.math.BigDecimal MOST = java.math.BigDecimal.valueOf(999_999_999_999_999_999L);

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    /**
     * Reads {@code header:<name>}, {@code attribute:<name>} or {@code returned}.
     *
     * @param value the setting's value
     * @return the source, or empty when the value is none of them
     */
    public static Optional<CostSource> parse(String value) {
        String text = value.trim();
        if (text.startsWith("header:") && TOKEN.matcher(text.substring(7)).matches()) {
            return Optional.of(new CostSource(Kind.HEADER, text.substring(7)));
        }
        if (text.startsWith("attribute:") && !text.substring(10).isBlank()) {
            return Optional.of(new CostSource(Kind.ATTRIBUTE, text.substring(10).trim()));
        }
        if (text.equals("returned")) {
            return Optional.of(new CostSource(Kind.RETURNED, ""));
        }
        return Optional.empty();
    }

    /**
     * A reported cost: a whole {@link Number} of 0 or more, or its decimal text.
     *
     * @param value what was reported, or null
     * @return the cost, or -1 when there is none or it is not a whole number of 0 or more (of at
     *         most 18 digits)
     */
    public static long cost(Object value) {
        if (value instanceof Number number) {
            // Through its decimal text, whatever its type: 3.0 is 3, 3.7 is none (never truncated).
            try {
                java.math.BigDecimal exact = new java.math.BigDecimal(number.toString());
                return exact.signum() < 0 || exact.compareTo(MOST) > 0 ? -1 : exact.longValueExact();
            } catch (ArithmeticException | NumberFormatException e) {
                return -1;
            }
        }
        if (value == null) {
            return -1;
        }
        String digits = value.toString().trim();
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
        return switch (kind) {
            case HEADER -> "header:" + name;
            case ATTRIBUTE -> "attribute:" + name;
            case RETURNED -> "returned";
        };
    }
}
