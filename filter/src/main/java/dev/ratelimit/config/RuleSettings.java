package dev.ratelimit.config;

import dev.ratelimit.FailurePolicy;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One rule of the filter, as configured under {@code ratelimit.rule.<name>.}: the limit
 * itself, which requests it applies to, and what it counts per.
 *
 * @param rule        the limit (name, algorithm, limit, window, burst, count-rejected, shadow)
 * @param match       URL patterns the rule applies to (any of them)
 * @param exclude     URL patterns it never applies to, even when matched
 * @param methods     HTTP methods it applies to, upper case; empty means every method; GET
 *                    includes HEAD
 * @param key         what it counts per
 * @param lowercaseKey whether key values are lower-cased first (user names that differ only
 *                    in case are one user)
 * @param cost        units each request takes
 * @param onFailure   what to do when Valkey cannot be reached in time
 * @param localRule   the rule the in-process limiter enforces for {@code on-failure=local}: the
 *                    same rule with {@code local-limit} as its limit (and its burst scaled alike)
 * @param outcome     which responses count ({@code count-when} or {@code refund-when}); empty:
 *                    every request the rule allows counts
 * @param plan        where the caller's plan comes from; empty: one limit for everyone
 * @param plans       the rule for each listed plan: the same name and algorithm, the plan's
 *                    limit, window and burst
 * @param localLease  the most units an instance takes ahead per key ({@code local-lease}); 0: none
 * @param localLeaseTime how long a local lease serves before its unused units go back
 * @param scope       who applies it: the filter, to the requests its {@code match} selects, or
 *                    only the annotated methods that name it
 * @param costFrom    where the actual cost is reported once the response is complete
 *                    ({@code cost-from}); empty: {@code cost} is what every request costs
 * @param quotaUnit   the unit of the rule's quota the fields announce ({@code quota-unit}, the
 *                    draft's {@code qu}); empty: requests, the draft's default, not written
 */
public record RuleSettings(Rule rule, List<UrlPattern> match, List<UrlPattern> exclude, Set<String> methods,
                           KeySpec key, boolean lowercaseKey, long cost, OnFailure onFailure, Rule localRule,
                           Optional<OutcomeCondition> outcome, Optional<PlanSpec> plan, Map<String, Rule> plans,
                           long localLease, Duration localLeaseTime, Scope scope, Optional<CostSource> costFrom,
                           Optional<String> quotaUnit) {

    /**
     * Who applies a rule ({@code ratelimit.rule.<name>.scope}): one or the other, never both, so
     * that a request is never counted by a rule the way its author did not mean (a query
     * parameter named like a method's parameter keying it for the filter).
     */
    public enum Scope {
        /** The filter applies it to the requests its {@code match}, {@code exclude} and {@code methods} select. */
        ROUTE("route"),
        /** Only the {@code @RateLimited} methods that name it apply it; the filter never does. */
        METHOD("method");

        private final String id;

        Scope(String id) {
            this.id = id;
        }

        /**
         * The setting's value.
         *
         * @return {@code route} or {@code method}
         */
        public String id() {
            return id;
        }
    }

    /** Copies the collections. */
    public RuleSettings {
        match = List.copyOf(match);
        exclude = List.copyOf(exclude);
        methods = Set.copyOf(methods);
        plans = Map.copyOf(plans);
    }

    /**
     * The rule a caller of a plan is held to.
     *
     * <p>An untrusted plan is ignored whatever it names, even a plan with a lower limit: every
     * plan shares one state per rule and key, and a write under a plan trims that state to the
     * plan's shape (a shorter window, a smaller log or bucket), so a client free to name a
     * "lower" plan could wipe what it had used under the rule's own limit.
     *
     * @param plan    the caller's plan, or null when it has none
     * @param trusted whether the plan's source can be believed (a header from a trusted proxy,
     *                a role, an attribute)
     * @return the plan's rule, or {@link #rule()} for no plan, an unlisted one, or an untrusted one
     */
    public Rule ruleFor(String plan, boolean trusted) {
        Rule chosen = plan == null || !trusted ? null : plans.get(plan);
        return chosen == null ? rule : chosen;
    }


    /** Whether a rule applies to a request's method and path, and if not, why not. */
    public enum Fit {
        /** The rule applies. */
        APPLIES,
        /** A method rule: the filter does not apply it to any request. */
        METHOD_RULE,
        /** The method is not one of the rule's. */
        OTHER_METHOD,
        /** An exclude pattern matches the path. */
        EXCLUDED,
        /** No match pattern matches the path. */
        OTHER_PATH
    }

    /**
     * Whether the rule applies to a request.
     *
     * @param method the HTTP method
     * @param path   the path within the application
     * @return true when the method is one of the rule's (HEAD being GET's), a match pattern
     *         matches and no exclude pattern does
     */
    public boolean appliesTo(String method, String path) {
        return fit(method, path) == Fit.APPLIES;
    }

    /**
     * Whether the filter applies the rule to a request, and if not, the first reason in the
     * order the filter tests them: its scope, the method (a rule of GET applies to HEAD too),
     * then the exclude patterns, then the match patterns.
     *
     * @param method the HTTP method
     * @param path   the path within the application
     * @return {@link Fit#APPLIES}, or why not
     */
    public Fit fit(String method, String path) {
        if (scope == Scope.METHOD) {
            return Fit.METHOD_RULE;
        }
        // HEAD does GET's work: HttpServlet.doHead runs doGet, Jakarta REST serves it with the GET method.
        boolean asGet = method.equals("HEAD") && methods.contains("GET");
        if (!methods.isEmpty() && !methods.contains(method) && !asGet) {
            return Fit.OTHER_METHOD;
        }
        for (UrlPattern pattern : exclude) {
            if (pattern.matches(path)) {
                return Fit.EXCLUDED;
            }
        }
        for (UrlPattern pattern : match) {
            if (pattern.matches(path)) {
                return Fit.APPLIES;
            }
        }
        return Fit.OTHER_PATH;
    }

    /**
     * The rule's failure policy, as the limiter takes it.
     *
     * @return open, closed, or local with {@link #localRule()}
     */
    public FailurePolicy failurePolicy() {
        return switch (onFailure) {
            case OPEN -> FailurePolicy.open();
            case CLOSED -> FailurePolicy.closed();
            case LOCAL -> FailurePolicy.local(localRule);
        };
    }
}
