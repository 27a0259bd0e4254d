package dev.ratelimit.cli;

import dev.ratelimit.Rule;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An explanation as one JSON object, for scripts: the same facts as the text, with {@code null}
 * where the text says nothing; written by Gson, as every JSON of the tool ({@link StateJson}).
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
                : explained.settings().valkey().isPresent() ? "valkey" : "in-process";
        return StateJson.write(object(
                "request", object("method", request.method(), "path", request.path(),
                        "remoteAddr", request.remoteAddr(), "trustedPeer", explained.trustedPeer(),
                        "clientAddress", explained.clientAddress()),
                "enabled", explained.settings().enabled(),
                "store", store,
                "keyPrefix", explained.settings().keyPrefix(),
                "rules", explained.rules().stream().map(ExplanationJson::rule).toList()));
    }

    private static Map<String, Object> rule(Explanation.RuleResult rule) {
        Explanation.Plan plan = rule.plan();
        return object("rule", rule.name(), "matches", rule.matches(), "reason", rule.reason(),
                "clientAddress", rule.address(), "key", rule.key(), "valueHashed", rule.valueHashed(),
                "valkeyKey", rule.valkeyKey(), "keyHashed", rule.keyHashed(),
                "limit", rule.rule() == null ? null : limit(rule.rule()), "cost", rule.cost(),
                "plan", plan == null ? null : object("source", plan.source(), "value", plan.value(),
                        "applied", plan.applied(), "note", plan.note()));
    }

    private static Map<String, Object> limit(Rule rule) {
        if (rule.calendar() != null) {
            // A calendar period has no one length: its name and zone say which period it is.
            return object("algorithm", rule.algorithm().id(), "limit", rule.limit(), "window",
                    rule.calendar().unit().id(), "timeZone", rule.calendar().zone().getId(), "burst", rule.burst());
        }
        return object("algorithm", rule.algorithm().id(), "limit", rule.limit(), "window", rule.window().toString(),
                "burst", rule.burst());
    }

    /** An object of name/value pairs, in their order. */
    private static Map<String, Object> object(Object... pairs) {
        Map<String, Object> json = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            json.put((String) pairs[i], pairs[i + 1]);
        }
        return json;
    }
}
