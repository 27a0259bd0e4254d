package dev.ratelimit.cli;

import java.io.PrintWriter;

/**
 * An explanation as lines for a person: the request and where its client was found, then one
 * line per rule, with an indented line per fact for the rules that count it.
 */
final class ExplanationText {

    private ExplanationText() {
    }

    /**
     * Prints an explanation.
     *
     * @param explained the explanation
     * @param out       where to
     */
    static void print(Explanation explained, PrintWriter out) {
        ArgumentRequest request = explained.request();
        out.println(request.method() + " " + request.path() + " from " + request.remoteAddr()
                + (explained.trustedPeer() ? " (a trusted proxy: " + explained.settings().clientIpHeader() + " is read)"
                        : " (not a trusted proxy: forwarding headers ignored)")
                + ", client " + explained.clientAddress());
        if (!explained.settings().enabled()) {
            out.println("rate limiting is off (ratelimit.enabled=false): no rule applies");
            return;
        }
        out.println(explained.settings().valkey().isPresent()
                ? "state in Valkey, key prefix " + explained.settings().keyPrefix()
                : "no Valkey (ratelimit.valkey.url is not set): the in-process limiter counts, per instance");
        for (Explanation.RuleResult rule : explained.rules()) {
            if (!rule.matches()) {
                out.println(rule.name() + ": no match: " + rule.reason());
                continue;
            }
            out.println(rule.name() + ": matches");
            if (rule.address() != null) {
                out.println("  client address  " + rule.address());
            }
            out.println("  key             " + rule.key()
                    + (rule.valueHashed() ? "  (a value hashed: '#' and its SHA-256)" : ""));
            if (rule.valkeyKey() != null) {
                out.println("  Valkey key      " + rule.valkeyKey() + (rule.keyHashed() ? "  (the key hashed)" : ""));
            }
            out.println("  limit           " + RuleDescription.limits(rule.rule())
                    + (rule.cost() != 1 ? ", this request costs " + rule.cost() : ""));
            Explanation.Plan plan = rule.plan();
            if (plan != null) {
                out.println("  plan            " + (plan.applied() != null ? plan.applied() : plan.note())
                        + " (from " + plan.source() + ")");
            }
        }
    }
}
