package dev.ratelimit.it.checker;

import java.util.Collection;
import java.util.Map;

/**
 * The little JSON the history needs: one object per line, built field by field. No library:
 * the test class path has none, and a history line is only ever strings, numbers, booleans,
 * lists and nested objects.
 */
final class Json {

    private final StringBuilder out = new StringBuilder("{");
    private boolean first = true;

    /**
     * A new object.
     *
     * @return an empty object to add fields to
     */
    static Json object() {
        return new Json();
    }

    /**
     * Adds a field; a null value is left out, so absent and null read the same.
     *
     * @param name  the field's name
     * @param value a String, Number, Boolean, Json, Map or Collection of those
     * @return this object
     */
    Json with(String name, Object value) {
        if (value == null) {
            return this;
        }
        if (!first) {
            out.append(',');
        }
        first = false;
        quote(out, name);
        out.append(':');
        value(out, value);
        return this;
    }

    @Override
    public String toString() {
        return out + "}";
    }

    private static void value(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Json json) {
            out.append(json);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(out, String.valueOf(entry.getKey()));
                out.append(':');
                value(out, entry.getValue());
            }
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            out.append('[');
            boolean first = true;
            for (Object item : list) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                value(out, item);
            }
            out.append(']');
        } else {
            quote(out, value.toString());
        }
    }

    private static void quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
