package dev.ratelimit.cli;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.config.OnFailure;
import dev.ratelimit.config.PlanSpec;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.UrlPattern;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One rule said as the filter understood it, on one line: everything that changes what it
 * refuses (excluded paths, cost, lower-cased keys, shadow, which responses count, the local
 * limit and lease, the plans and where they come from), in an order that does not change from
 * one run to the next so that two checks can be compared.
 */
final class RuleDescription {

    private RuleDescription() {
    }

    /**
     * The rule's line.
     *
     * @param settings the rule as read
     * @return e.g. {@code api: GET,POST [/api/*] except [/api/health], key ip, ...}, or for a
     *         method rule {@code reset: method rule (where @RateLimited names it), key param:accountId, ...}
     */
    static String of(RuleSettings settings) {
        Rule rule = settings.rule();
        StringBuilder line = new StringBuilder("  ").append(rule.name()).append(": ");
        if (settings.scope() == RuleSettings.Scope.METHOD) {
            line.append("method rule (where @RateLimited names it)");
        } else {
            // Sorted: the settings hold the methods as a set, whose order varies between runs.
            line.append(settings.methods().isEmpty() ? "any method" : String.join(",", new TreeSet<>(settings.methods())))
                    .append(' ').append(settings.match());
        }
        if (!settings.exclude().isEmpty()) {
            line.append(" except ").append(settings.exclude().stream().map(UrlPattern::text).toList());
        }
        line.append(", key ").append(settings.key()).append(settings.lowercaseKey() ? " (lower-cased)" : "");
        if (settings.cost() != 1) {
            line.append(", cost ").append(settings.cost());
        }
        line.append(", ").append(limits(rule));
        settings.outcome().ifPresent(outcome -> line.append(", ").append(outcome));
        if (rule.countRejected()) {
            line.append(", count-rejected");
        }
        if (rule.shadow()) {
            line.append(", shadow (observes, never refuses)");
        }
        line.append(", on-failure ").append(settings.onFailure().id());
        if (settings.onFailure() == OnFailure.LOCAL) {
            line.append(" (in-process ").append(limits(settings.localRule())).append(')');
        }
        if (settings.localLease() > 0) {
            line.append(", local lease ").append(settings.localLease()).append(" for ").append(settings.localLeaseTime());
        }
        settings.plan().ifPresent(plan -> line.append("; plan from ").append(source(plan)));
        // Sorted by name: the settings hold the plans as a map, whose order varies between runs.
        for (Map.Entry<String, Rule> plan : new TreeMap<>(settings.plans()).entrySet()) {
            line.append("; plan ").append(plan.getKey()).append(": ").append(limits(plan.getValue()));
        }
        return line.toString();
    }

    /** Where the plan is read, as it is written in the settings. */
    static String source(PlanSpec plan) {
        return switch (plan.kind()) {
            case HEADER -> "header:" + plan.name();
            case ATTRIBUTE -> "attribute:" + plan.name();
            case ROLE -> "role:" + String.join(",", plan.roles());
        };
    }

    /** The limit; a concurrency rule's window is its permit timeout, not a period. */
    static String limits(Rule rule) {
        if (rule.algorithm() == Algorithm.CONCURRENCY) {
            return rule.algorithm().id() + " " + rule.limit() + " at once (permit timeout " + rule.window() + ")";
        }
        // A calendar window is named with its zone: "per calendar-month in Europe/Berlin".
        Object window = rule.calendar() != null ? rule.calendar() : rule.window();
        return rule.algorithm().id() + " " + rule.limit() + " per " + window
                + (rule.burst() != rule.limit() ? " (burst " + rule.burst() + ")" : "");
    }

}
