package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The settings an {@link HttpWorkload}'s rules are given, as the checker's config source holds them. */
final class HttpSettings {

    private HttpSettings() {
    }

    /**
     * The settings of these rules as the filter reads them: what the checker's config source
     * holds. Every run sets the same property names ({@value HttpWorkload#MAX_RULES} route rules and
     * as many method rules, each with every property, empty where unset): MicroProfile Config
     * learns the names once, when the app starts, and a refresh reads values only.
     *
     * @param rules       the route rules as they are now (the others are placeholders)
     * @param methodRules the method rules as they are now (the others are placeholders)
     * @param denyCache   whether the deny cache is on
     * @param network     the forwarding settings
     * @param generation  this reading's number, the limit of rule {@code g} (on {@code /gen/*}): a
     *                    response that announces it was decided by this reading, whole
     * @return property to value
     */
    static Map<String, String> of(List<HttpWorkload.Spec> rules, List<HttpWorkload.Spec> methodRules, boolean denyCache,
                                  HttpForwarding.Network network, int generation) {
        Map<String, String> m = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < HttpWorkload.MAX_RULES; i++) {
            boolean used = i < rules.size();
            HttpWorkload.Spec spec = used ? rules.get(i) : placeholder("r" + i);
            List<String> paths = new ArrayList<>();
            for (int mask = 1; used && mask < 1 << rules.size(); mask++) {
                if ((mask & 1 << i) != 0) {
                    paths.add("/s" + mask + "/*");
                }
            }
            names.add(spec.rule().name());
            rule(m, spec, used ? String.join(",", paths) : "/unused/*");
        }
        for (int i = 0; i < HttpWorkload.MAX_RULES; i++) {
            HttpWorkload.Spec spec = i < methodRules.size() ? methodRules.get(i) : placeholder("m" + i);
            names.add(spec.rule().name());
            rule(m, spec, null);
        }
        m.put("ratelimit.trusted-proxies", network.trustedProxies());
        m.put("ratelimit.client-ip-header", network.header());
        m.put("ratelimit.ipv6-prefix", Integer.toString(network.ipv6Prefix()));
        m.put("ratelimit.deny-cache.enabled", Boolean.toString(denyCache));
        Rule marker = Rule.of(GENERATION_RULE, Algorithm.FIXED_WINDOW, generation, Duration.ofMillis(HttpWorkload.WINDOWS[0]));
        rule(m, new HttpWorkload.Spec(marker, 1, null, null, marker, marker, true, null), "/gen/*");
        names.add(GENERATION_RULE);
        m.put("ratelimit.rules", String.join(",", names));
        return m;
    }

    /** One rule's settings: a route rule's with its paths, a method rule's ({@code scope=method}) with null. */
    private static void rule(Map<String, String> m, HttpWorkload.Spec spec, String match) {
        Rule rule = spec.rule();
        String p = "ratelimit.rule." + rule.name() + ".";
        boolean burst = rule.algorithm().hasBurst();
        m.put(p + "scope", match == null ? "method" : "");
        m.put(p + "match", match == null ? "" : match);
        m.put(p + "algorithm", rule.algorithm().id());
        m.put(p + "limit", Long.toString(rule.limit()));
        m.put(p + "window", window(rule));
        m.put(p + "time-zone", rule.calendar() == null ? "" : rule.calendar().zone().getId());
        m.put(p + "burst", burst ? Long.toString(rule.burst()) : "");
        m.put(p + "key", spec.address() != null ? spec.address() : spec.byParam() ? "param:caller" : "header:X-Caller");
        m.put(p + "cost", Long.toString(spec.cost()));
        m.put(p + "count-rejected", Boolean.toString(rule.countRejected()));
        m.put(p + "count-when", "count-when".equals(spec.outcome()) ? spec.statuses() : "");
        m.put(p + "refund-when", "refund-when".equals(spec.outcome()) ? spec.statuses() : "");
        m.put(p + "plan", "header:X-Plan");
        for (String plan : List.of("basic", "pro")) {
            Rule planRule = spec.plan(plan);
            m.put(p + "plan." + plan + ".limit", Long.toString(planRule.limit()));
            m.put(p + "plan." + plan + ".window", window(planRule));
            m.put(p + "plan." + plan + ".time-zone", planRule.calendar() == null ? "" : planRule.calendar().zone().getId());
            m.put(p + "plan." + plan + ".burst", burst ? Long.toString(planRule.burst()) : "");
        }
    }

    /** A window as settings write it: in ms, or a calendar window's name (its zone is {@code time-zone}). */
    private static String window(Rule rule) {
        return rule.calendar() == null ? rule.window().toMillis() + "ms" : rule.calendar().unit().id();
    }

    /** A rule no request of a run asks: it keeps the property names set. */
    private static HttpWorkload.Spec placeholder(String name) {
        Rule rule = Rule.of(name, Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(HttpWorkload.WINDOWS[0]));
        return new HttpWorkload.Spec(rule, 1, null, null, rule, rule, true, null);
    }

    /** The rule whose limit is the reading's number. */
    static final String GENERATION_RULE = "g";
}
