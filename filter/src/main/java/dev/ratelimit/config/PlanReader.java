package dev.ratelimit.config;

import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a rule's plans: {@code <rule>.plan}, where a caller's plan comes from, and the plans
 * under {@code <rule>.plan.<plan>.}, each a variant of the rule with its own limit, window and
 * burst. Problems go to the shared {@link SettingsValues}.
 */
final class PlanReader {

    private final SettingsValues values;
    private final WindowReader windows;

    /** A reader of plans whose reads and problems are recorded in {@code values}. */
    PlanReader(SettingsValues values) {
        this.values = values;
        this.windows = new WindowReader(values);
    }

    /**
     * {@code <rule>.plan}: where the caller's plan comes from.
     *
     * @param p the rule's prefix, {@code ratelimit.rule.<name>.}
     * @return the plan's source, or empty if not set or not valid (a problem then)
     */
    Optional<PlanSpec> spec(String p) {
        return values.raw(p + "plan").flatMap(v -> {
            Optional<PlanSpec> spec = PlanSpec.parse(v);
            if (spec.isEmpty()) {
                values.problem(p + "plan", v, "must be header:<name>, role:<role>,<role>... or attribute:<name> "
                        + "(role and plan names: letters, digits, '_' and '-')");
            }
            return spec;
        });
    }

    /**
     * The plans configured under {@code <rule>.plan.<plan>.}: each a rule of the same name and
     * algorithm with its own limit, window and burst, the rule's own where a plan sets none. A
     * plan that cannot take the rule's cost is a problem, as the rule itself would be: no request
     * of its callers could ever be allowed.
     */
    Map<String, Rule> plans(String p, Rule base, Optional<PlanSpec> spec, long cost) {
        String planPrefix = p + "plan.";
        Set<String> names = new TreeSet<>();
        for (String name : values.source().names()) {
            if (name.startsWith(planPrefix)) {
                String rest = name.substring(planPrefix.length());
                int dot = rest.indexOf('.');
                names.add(dot < 0 ? rest : rest.substring(0, dot));
            }
        }
        if (spec.isEmpty()) {
            if (!names.isEmpty()) {
                values.problem(planPrefix + names.iterator().next() + ".*", "(set)", "needs " + p + "plan, where "
                        + "the caller's plan comes from: header:<name>, role:<roles> or attribute:<name>");
            }
            return Map.of();
        }
        if (names.isEmpty()) {
            values.problem(p + "plan", values.raw(p + "plan").orElse(""), "names no plan: set " + planPrefix
                    + "<plan>.limit (and .window, .burst) for each plan");
            return Map.of();
        }
        Map<String, Rule> plans = new LinkedHashMap<>();
        for (String plan : names) {
            String q = planPrefix + plan + ".";
            if (!PlanSpec.PLAN_NAME.matcher(plan).matches()) {
                values.problem(q + "*", plan, "is not a plan name: letters, digits, '_' and '-'");
                continue;
            }
            int planBefore = values.problems().size();
            long limit = values.number(q + "limit", base.limit(), 1, Long.MAX_VALUE);
            WindowReader.Window own = new WindowReader.Window(base.window(), base.calendar());
            if (!base.algorithm().isConcurrency()) {
                own = windows.read(q, base.algorithm(), Optional.of(own));
            }
            Duration window = own.window();
            // The plan keeps the rule's shape: its burst grows or shrinks with its limit.
            long defaultBurst = !base.algorithm().hasBurst() ? limit
                    : Math.max(1, (long) Math.ceil((double) base.burst() * limit / base.limit()));
            long burst = defaultBurst;
            Optional<String> burstText = values.raw(q + "burst");
            if (burstText.isPresent()) {
                if (!base.algorithm().hasBurst()) {
                    values.problem(q + "burst", burstText.get(), "applies only to token-bucket and gcra, not to "
                            + base.algorithm().id());
                } else {
                    burst = values.parseNumber(q + "burst", burstText.get(), 1, Long.MAX_VALUE);
                }
            }
            if (values.problems().size() > planBefore) {
                // A bad number reads as 1: checking it against the cost would only repeat the problem.
                continue;
            }
            if (cost > (base.algorithm().hasBurst() ? burst : limit)) {
                if (burstText.isPresent() && base.algorithm().hasBurst()) {
                    values.problem(q + "burst", burstText.get(), "must not be below the rule's cost (" + cost
                            + "): a request on this plan could never be allowed");
                } else {
                    values.problem(q + "limit", values.raw(q + "limit").orElse(Long.toString(limit)),
                            base.algorithm().hasBurst()
                                    ? "gives the plan a burst of " + burst + ", below the rule's cost (" + cost
                                    + "): a request on this plan could never be allowed (the burst scales with the "
                                    + "limit unless " + q + "burst is set)"
                                    : "must not be below the rule's cost (" + cost + "): a request on this plan could "
                                    + "never be allowed");
                }
                continue;
            }
            Rule planRule;
            try {
                planRule = Rule.builder(base.name(), base.algorithm()).limit(limit).window(window)
                        .calendar(own.calendar()).burst(burst).countRejected(base.countRejected())
                        .shadow(base.shadow()).build();
            } catch (IllegalArgumentException e) {
                // The plan's window, or the rule's it keeps.
                String windowProperty = values.raw(q + "window").isPresent() ? q + "window" : p + "window";
                values.problems().add(RuleBounds.problem(values, q, windowProperty, base.algorithm(), limit, burst, e));
                continue;
            }
            try {
                // A plan's callers are held for slots as the rule's are, within what its bucket allows.
                plans.put(plan, planRule.withMaxDelay(base.maxDelay()));
            } catch (IllegalArgumentException e) {
                values.problem(p + "max-delay", values.raw(p + "max-delay").orElse(""), "is too long for plan '" + plan
                        + "': " + e.getMessage().replaceFirst("^rule '[^']*': max delay \\S+ is too long: ", ""));
            }
        }
        return plans;
    }
}
