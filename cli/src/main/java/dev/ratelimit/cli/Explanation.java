package dev.ratelimit.cli;

import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.PlanSpec;
import dev.ratelimit.config.RequestMatcher;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.UrlPattern;
import dev.ratelimit.internal.KeyValues;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * What the filter does with one request, rule by rule, as its own code decides it
 * ({@link RequestMatcher}: the match, the client address, the key, the plan) and the key of
 * the state in Valkey ({@link KeyValues#stateKey}). Nothing here decides again; it only says
 * why, for the rules that do not count the request.
 *
 * @param request       the request
 * @param trustedPeer   whether its peer is a trusted proxy (forwarding and plan headers believed)
 * @param clientAddress the client address keys use
 * @param settings      the settings read
 * @param rules         one entry per rule, in the order of the settings
 */
record Explanation(ArgumentRequest request, boolean trustedPeer, String clientAddress, FilterSettings settings,
                   List<RuleResult> rules) {

    /**
     * One rule's part.
     *
     * @param name         the rule's name
     * @param reason       why it does not count the request; null when it does
     * @param address      the client address its key used; null when its key does not use it
     * @param key          the key it counts the request under; null when it does not
     * @param valkeyKey    the Valkey key of that state; null without Valkey or without a key
     * @param rule         the rule the request is held to (the plan's, or the rule's own); null
     *                     when the rule does not count it
     * @param plan         where the rule reads the plan, its value and what came of it; null
     *                     for a rule without plans or one that does not count the request
     * @param cost         the units the request takes ({@code cost})
     */
    record RuleResult(String name, String reason, String address, String key, String valkeyKey, Rule rule,
                      Plan plan, long cost) {

        /** Whether the rule counts the request. */
        boolean matches() {
            return reason == null;
        }

        /** Whether a value in the key was replaced by its hash (never literal: '#' is always hashed). */
        boolean valueHashed() {
            return key != null && key.indexOf('#') >= 0;
        }

        /** Whether the Valkey key holds the key's hash rather than the key itself. */
        boolean keyHashed() {
            return key != null && !KeyValues.safe(key).equals(key);
        }
    }

    /**
     * The plan of a rule with plans.
     *
     * @param source  where it is read, as in the settings ({@code header:X-Plan})
     * @param value   what the filter read there, or null
     * @param applied the listed plan applied, or null for the rule's own limit
     * @param note    why the rule's own limit applies, or null
     */
    record Plan(String source, String value, String applied, String note) {
    }

    /**
     * Explains a request.
     *
     * @param settings the settings, read as the filter reads them
     * @param request  the request
     * @return the explanation
     */
    static Explanation of(FilterSettings settings, ArgumentRequest request) {
        RequestMatcher matcher = RequestMatcher.of(settings);
        List<RuleResult> results = new ArrayList<>();
        for (RuleSettings rule : settings.enabled() ? settings.rules() : List.<RuleSettings>of()) {
            results.add(explain(settings, matcher, rule, request));
        }
        return new Explanation(request, matcher.fromTrustedPeer(request), matcher.clientAddress(request), settings,
                results);
    }

    private static RuleResult explain(FilterSettings settings, RequestMatcher matcher, RuleSettings rule,
                                      ArgumentRequest request) {
        String misfit = misfit(rule, request);
        if (misfit != null) {
            return new RuleResult(rule.rule().name(), misfit, null, null, null, null, null, rule.cost());
        }
        // The address only if the key asks for it, exactly as the filter resolves it.
        Supplier<String> resolve = matcher.lazyClientAddress(request);
        String[] used = new String[1];
        Optional<String> key = matcher.key(rule, request, () -> used[0] = resolve.get());
        if (key.isEmpty()) {
            KeySpec.Part missing = matcher.missingPart(rule, request).orElseThrow();
            return new RuleResult(rule.rule().name(), "no key: " + missing(missing, rule), null, null, null, null, null,
                    rule.cost());
        }
        Rule applied = matcher.planRule(rule, request);
        Plan plan = plan(matcher, rule, request);
        String valkeyKey = settings.valkey().isEmpty() ? null
                : KeyValues.stateKey(settings.keyPrefix(), applied.name(), applied.algorithm().id(), key.get());
        return new RuleResult(rule.rule().name(), null, used[0], key.get(), valkeyKey, applied, plan, rule.cost());
    }

    /** Why the rule does not apply to the method and path, as the filter tests it; null when it does. */
    private static String misfit(RuleSettings rule, ArgumentRequest request) {
        String path = request.path();
        return switch (rule.fit(request.method(), path)) {
            case APPLIES -> null;
            case METHOD_RULE -> "a method rule (scope=method): applied where @RateLimited names it, never by the filter";
            case OTHER_METHOD -> "method " + request.method() + " is not one of "
                    + String.join(",", new TreeSet<>(rule.methods()));
            case EXCLUDED -> "path " + path + " is excluded by " + rule.exclude().stream()
                    .filter(p -> p.matches(path)).map(UrlPattern::text).findFirst().orElse("an exclude pattern");
            case OTHER_PATH -> "path " + path + " matches none of " + rule.match().stream().map(UrlPattern::text).toList();
        };
    }

    private static String missing(KeySpec.Part part, RuleSettings rule) {
        return switch (part.kind()) {
            case PRINCIPAL -> "no principal (key " + rule.key() + " counts authenticated users only)";
            case HEADER -> "no header " + part.name() + " (or an empty one)";
            case PARAM -> "no parameter " + part.name() + " (or an empty one)";
            default -> "no " + part.kind().id();
        };
    }

    private static Plan plan(RequestMatcher matcher, RuleSettings rule, ArgumentRequest request) {
        if (rule.plan().isEmpty()) {
            return null;
        }
        PlanSpec spec = rule.plan().get();
        String source = RuleDescription.source(spec);
        String value = matcher.plan(rule, request).orElse(null);
        if (value != null && rule.plans().containsKey(value)) {
            return new Plan(source, value, value, null);
        }
        String note;
        if (value != null) {
            note = "'" + value + "' is not a listed plan: the rule's own limit";
        } else if (spec.kind() == PlanSpec.Kind.HEADER && request.header(spec.name()) != null) {
            note = "header " + spec.name() + " ignored (peer " + request.remoteAddr()
                    + " is not a trusted proxy): the rule's own limit";
        } else {
            note = "none given: the rule's own limit";
        }
        return new Plan(source, value, null, note);
    }
}
