package dev.ratelimit.cli;

import dev.ratelimit.Rule;

import java.util.List;
import java.util.StringJoiner;

/**
 * An explanation as one JSON object, for scripts: the same facts as the text, with {@code null}
 * where the text says nothing. Written by hand (a few strings and numbers need no library).
 */
final class ExplanationJson {

    private ExplanationJson() {
    }

    /**
     * The object.
     *
     * @param explained the explanation
     * @return one line of JSON
     */
    static String of(Explanation explained) {
        ArgumentRequest request = explained.request();
        Object store = !explained.settings().enabled() ? null
                : explained.settings().valkeyUrl().isPresent() ? "valkey" : "in-process";
        return object(
                "request", object("method", request.method(), "path", request.path(),
                        "remoteAddr", request.remoteAddr(), "trustedPeer", explained.trustedPeer(),
                        "clientAddress", explained.clientAddress()),
                "enabled", explained.settings().enabled(),
                "store", store,
                "keyPrefix", explained.settings().keyPrefix(),
                "rules", new Raw(array(explained.rules().stream().map(ExplanationJson::rule).toList()))).json();
    }

    private static Raw rule(Explanation.RuleResult rule) {
        Explanation.Plan plan = rule.plan();
        return object("rule", rule.name(), "matches", rule.matches(), "reason", rule.reason(),
                "clientAddress", rule.address(), "key", rule.key(), "valueHashed", rule.valueHashed(),
                "valkeyKey", rule.valkeyKey(), "keyHashed", rule.keyHashed(),
                "limit", rule.rule() == null ? null : limit(rule.rule()), "cost", rule.cost(),
                "plan", plan == null ? null : object("source", plan.source(), "value", plan.value(),
                        "applied", plan.applied(), "note", plan.note()));
    }

    private static Raw limit(Rule rule) {
        return object("algorithm", rule.algorithm().id(), "limit", rule.limit(), "window", rule.window().toString(),
                "burst", rule.burst());
    }

    /** Text already JSON. */
    private record Raw(String json) {
    }

    /** An object of name/value pairs: text, numbers, booleans, null, or {@link Raw} JSON. */
    private static Raw object(Object... pairs) {
        StringJoiner json = new StringJoiner(",", "{", "}");
        for (int i = 0; i < pairs.length; i += 2) {
            json.add(string((String) pairs[i]) + ":" + value(pairs[i + 1]));
        }
        return new Raw(json.toString());
    }

    private static String array(List<Raw> items) {
        StringJoiner json = new StringJoiner(",", "[", "]");
        items.forEach(item -> json.add(item.json()));
        return json.toString();
    }

    private static String value(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Raw raw) {
            return raw.json();
        }
        if (value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        return string(value.toString());
    }

    /** A JSON string: quotes, backslashes and control characters escaped (RFC 8259, section 7). */
    static String string(String text) {
        StringBuilder json = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"').toString();
    }
}
