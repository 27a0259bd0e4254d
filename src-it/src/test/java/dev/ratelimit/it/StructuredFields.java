package dev.ratelimit.it;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict parser for the subset of RFC 8941 Structured Field Lists the rate-limit fields use:
 * String items with Integer parameters. Anything else is an error, so a malformed header
 * fails the test.
 */
final class StructuredFields {

    record Item(String value, Map<String, Long> params) {
        long param(String key) {
            Long v = params.get(key);
            if (v == null) {
                throw new AssertionError("parameter '" + key + "' missing from " + this);
            }
            return v;
        }
    }

    private final String text;
    private int at;

    private StructuredFields(String text) {
        this.text = text;
    }

    static List<Item> parseList(String text) {
        StructuredFields p = new StructuredFields(text);
        List<Item> items = new ArrayList<>();
        p.skipSp();
        if (p.at == text.length()) {
            return items;
        }
        while (true) {
            items.add(p.item());
            p.skipOws();
            if (p.at == text.length()) {
                return items;
            }
            p.expect(',');
            p.skipOws();
            if (p.at == text.length()) {
                throw p.fail("trailing comma");
            }
        }
    }

    private Item item() {
        String value = string();
        Map<String, Long> params = new LinkedHashMap<>();
        while (at < text.length() && text.charAt(at) == ';') {
            at++;
            skipSp();
            String key = key();
            expect('=');
            if (params.put(key, integer()) != null) {
                throw fail("duplicate parameter " + key);
            }
        }
        return new Item(value, params);
    }

    private String string() {
        expect('"');
        StringBuilder s = new StringBuilder();
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '\\') {
                char next = text.charAt(at++);
                if (next != '"' && next != '\\') {
                    throw fail("bad escape");
                }
                s.append(next);
            } else if (c == '"') {
                return s.toString();
            } else if (c < 0x20 || c > 0x7e) {
                throw fail("bad character in string");
            } else {
                s.append(c);
            }
        }
        throw fail("unterminated string");
    }

    private String key() {
        int start = at;
        if (at >= text.length() || !(Character.isLowerCase(text.charAt(at)) || text.charAt(at) == '*')) {
            throw fail("bad key");
        }
        while (at < text.length() && (Character.isLowerCase(text.charAt(at)) || Character.isDigit(text.charAt(at))
                || "_-.*".indexOf(text.charAt(at)) >= 0)) {
            at++;
        }
        return text.substring(start, at);
    }

    private long integer() {
        int start = at;
        if (at < text.length() && text.charAt(at) == '-') {
            at++;
        }
        int digits = at;
        while (at < text.length() && Character.isDigit(text.charAt(at))) {
            at++;
        }
        if (at == digits || at - digits > 15) {
            throw fail("bad integer");
        }
        return Long.parseLong(text.substring(start, at));
    }

    private void expect(char c) {
        if (at >= text.length() || text.charAt(at) != c) {
            throw fail("expected '" + c + "'");
        }
        at++;
    }

    private void skipSp() {
        while (at < text.length() && text.charAt(at) == ' ') {
            at++;
        }
    }

    private void skipOws() {
        while (at < text.length() && (text.charAt(at) == ' ' || text.charAt(at) == '\t')) {
            at++;
        }
    }

    private AssertionError fail(String why) {
        return new AssertionError("not a Structured Field List (" + why + " at " + at + "): " + text);
    }
}
