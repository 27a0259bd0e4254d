package dev.ratelimit.it.checker;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads back the little JSON {@link Json} writes, one line at a time: objects as maps, arrays
 * as lists, strings, numbers ({@code Long} when integral, else {@code Double}), booleans and
 * null. Enough to replay a kept workload or history; no library, as for writing. Also reads
 * the dashboard's JSON and Prometheus's answers for the monitoring tests.
 */
public final class JsonReader {

    private final String text;
    private int at;

    private JsonReader(String text) {
        this.text = text;
    }

    /**
     * Parses one JSON object.
     *
     * @param line the text, one object
     * @return its fields, in order
     * @throws IllegalArgumentException naming the position, when the text is not one object
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(String line) {
        JsonReader reader = new JsonReader(line);
        Object value = reader.value();
        reader.space();
        if (!(value instanceof Map) || reader.at != line.length()) {
            throw reader.error("one JSON object per line");
        }
        return (Map<String, Object>) value;
    }

    private Object value() {
        space();
        if (at >= text.length()) {
            throw error("a value");
        }
        char c = text.charAt(at);
        if (c == '{') {
            return map();
        }
        if (c == '[') {
            return list();
        }
        if (c == '"') {
            return string();
        }
        for (String word : new String[] {"true", "false", "null"}) {
            if (text.startsWith(word, at)) {
                at += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
        }
        return number();
    }

    private Map<String, Object> map() {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        space();
        if (peek() == '}') {
            at++;
            return map;
        }
        while (true) {
            space();
            String name = string();
            space();
            expect(':');
            map.put(name, value());
            space();
            if (peek() == ',') {
                at++;
                continue;
            }
            expect('}');
            return map;
        }
    }

    private List<Object> list() {
        List<Object> list = new ArrayList<>();
        at++;
        space();
        if (peek() == ']') {
            at++;
            return list;
        }
        while (true) {
            list.add(value());
            space();
            if (peek() == ',') {
                at++;
                continue;
            }
            expect(']');
            return list;
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char escaped = text.charAt(at++);
            switch (escaped) {
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> out.append(escaped);
            }
        }
        throw error("a closing quote");
    }

    private Number number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        String digits = text.substring(start, at);
        if (digits.isEmpty()) {
            throw error("a value");
        }
        if (digits.chars().allMatch(ch -> ch == '-' || Character.isDigit(ch))) {
            return Long.valueOf(digits);
        }
        return Double.valueOf(digits);
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("'" + c + "'");
        }
        at++;
    }

    private void space() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    private IllegalArgumentException error(String wanted) {
        return new IllegalArgumentException("JSON: expected " + wanted + " at character " + at + " of: "
                + (text.length() > 200 ? text.substring(0, 200) + "..." : text));
    }
}
