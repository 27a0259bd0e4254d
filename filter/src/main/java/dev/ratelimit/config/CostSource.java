package dev.ratelimit.config;

import java.math.BigDecimal;
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

    private static final BigDecimal LONGEST = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final Pattern DIGITS = Pattern.compile("[0-9]+");

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
     * A reported cost: a whole {@link Number} of 0 or more, or its decimal text (digits only,
     * spaces around them allowed). A whole number too large for a {@code long} is
     * {@code Long.MAX_VALUE}: a charge is cut at the key's debt bound anyway, and reported so.
     *
     * @param value what was reported, or null
     * @return the cost, or -1 when there is none or it is not a whole number of 0 or more (a
     *         fraction is never rounded)
     */
    public static long cost(Object value) {
        if (value == null) {
            return -1;
        }
        BigDecimal exact;
        if (value instanceof Number number) {
            // Through its decimal text, whatever its type: 3.0 is 3, 3.7 is none.
            try {
                exact = new BigDecimal(number.toString());
            } catch (NumberFormatException e) {
                return -1; // NaN, an infinity
            }
        } else {
            String digits = value.toString().trim();
            if (digits.isEmpty() || !DIGITS.matcher(digits).matches()) {
                return -1;
            }
            exact = new BigDecimal(digits);
        }
        if (exact.signum() < 0 || exact.stripTrailingZeros().scale() > 0) {
            return -1;
        }
        return exact.compareTo(LONGEST) >= 0 ? Long.MAX_VALUE : exact.longValueExact();
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
