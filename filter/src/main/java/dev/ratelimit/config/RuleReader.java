package dev.ratelimit.config;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Charges;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads the settings of one listed rule, {@code ratelimit.rule.<name>.*}, into a
 * {@link RuleSettings}: its algorithm, limit, window or lease timeout, burst, matching, key,
 * cost, failure policy, local limit and outcome condition, each checked on its own and against
 * the others. Its plans are read by {@link PlanReader}. Problems go to the shared
 * {@link SettingsValues}, so that the reader reports them with every other one.
 */
final class RuleReader {

    private static final Pattern QUOTA_UNIT = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    private static final Pattern METHOD = Pattern.compile("[A-Za-z]{1,32}");
    /** The status of a request the filter rejects. */
    private static final int TOO_MANY_REQUESTS = 429;

    private final SettingsValues values;
    private final PlanReader planReader;
    private final LocalLeaseReader localLeases;
    private final WindowReader windows;

    /** A reader of rules whose reads and problems are recorded in {@code values}. */
    RuleReader(SettingsValues values) {
        this.values = values;
        this.planReader = new PlanReader(values);
        this.localLeases = new LocalLeaseReader(values);
        this.windows = new WindowReader(values);
    }

    /**
     * Reads one rule.
     *
     * @param name the rule's name, already checked and listed once
     * @return the rule, or empty if any of its settings has a problem (recorded in the values)
     */
    Optional<RuleSettings> read(String name) {
        String p = SettingsReader.PREFIX + "rule." + name + ".";
        int before = values.problems().size();
        Algorithm algorithm = values.choice(p + "algorithm", Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.values(), Algorithm::id);
        long limit = values.required(p + "limit").map(v -> values.parseNumber(p + "limit", v, 1, Long.MAX_VALUE)).orElse(1L);
        WindowReader.Window read = window(p, algorithm);
        Duration window = read.window();
        long burst = limit;
        Optional<String> burstText = values.raw(p + "burst");
        if (burstText.isPresent()) {
            if (!algorithm.hasBurst()) {
                values.problem(p + "burst", burstText.get(), "applies only to token-bucket and gcra, not to " + algorithm.id());
            } else {
                burst = values.parseNumber(p + "burst", burstText.get(), 1, Long.MAX_VALUE);
            }
        }
        RuleSettings.Scope scope = values.choice(p + "scope", RuleSettings.Scope.ROUTE, RuleSettings.Scope.values(),
                RuleSettings.Scope::id);
        if (scope == RuleSettings.Scope.METHOD) {
            // Ignored by a method rule: refused rather than read, so no one believes the filter applies them.
            for (String routing : List.of("match", "exclude", "methods")) {
                values.raw(p + routing).ifPresent(v -> values.problem(p + routing, v, "applies only to a route rule: "
                        + p + "scope=method makes the rule apply where @RateLimited names it, never by the filter"));
            }
        }
        List<UrlPattern> match = values.patterns(p + "match", "/*");
        List<UrlPattern> exclude = values.patterns(p + "exclude", null);
        Set<String> methods = new TreeSet<>();
        for (String method : values.list(p + "methods")) {
            if (METHOD.matcher(method).matches()) {
                methods.add(method.toUpperCase(Locale.ROOT));
            } else {
                values.problem(p + "methods", method, "is not an HTTP method");
            }
        }
        KeySpec key = values.raw(p + "key").map(v -> KeySpec.parse(v).orElseGet(() -> {
            values.problem(p + "key", v, "is not a key: use ip, principal, principal-or-ip, path, header:<name>, "
                    + "param:<name> or global, several joined by '+'");
            return null;
        })).orElseGet(() -> KeySpec.parse("ip").orElseThrow());
        boolean lowercaseKey = values.bool(p + "lowercase-key", false);
        long cost = values.number(p + "cost", 1, 1, Long.MAX_VALUE);
        boolean countRejected = values.bool(p + "count-rejected", false);
        if (algorithm.isConcurrency() && countRejected) {
            values.problem(p + "count-rejected", "true", "does not apply to concurrency: a rejected request holds no lease");
        }
        OnFailure onFailure = values.choice(p + "on-failure", OnFailure.OPEN, OnFailure.values(), OnFailure::id);
        long localLimit = values.number(p + "local-limit", limit, 1, limit);
        boolean shadow = values.bool(p + "shadow", false);
        Optional<OutcomeCondition> outcome = outcome(p, algorithm, countRejected);
        Optional<CostSource> costFrom = costFrom(p, algorithm, scope);
        Optional<String> quotaUnit = quotaUnit(p, algorithm);
        Duration maxDelay = maxDelay(p, algorithm, countRejected, shadow);
        if (algorithm.isConcurrency() && limit > Rule.MAX_SLIDING_LOG_LIMIT) {
            values.problem(p + "limit", Long.toString(limit), "must be at most " + Rule.MAX_SLIDING_LOG_LIMIT
                    + " for concurrency, which keeps one lease per request in progress");
        }
        if (algorithm == Algorithm.SLIDING_LOG && limit > Rule.MAX_SLIDING_LOG_LIMIT) {
            values.problem(p + "limit", Long.toString(limit), "must be at most " + Rule.MAX_SLIDING_LOG_LIMIT
                    + " for sliding-log, which keeps one entry per unit (use sliding-window-counter, token-bucket "
                    + "or gcra for higher limits)");
        }
        if (values.problems().size() > before) {
            return Optional.empty();
        }
        try {
            Rule rule = Rule.builder(name, algorithm).limit(limit).window(window).calendar(read.calendar())
                    .burst(burst).countRejected(countRejected).shadow(shadow).build();
            if (!maxDelayFits(p, rule, maxDelay)) {
                return Optional.empty();
            }
            rule = rule.withMaxDelay(maxDelay);
            if (cost > rule.capacity()) {
                values.problem(p + "cost", Long.toString(cost), "must not exceed the rule's "
                        + (algorithm.hasBurst() ? "burst" : "limit") + " (" + rule.capacity() + "): it could never be allowed");
                return Optional.empty();
            }
            // The local rule keeps the shape of the shared one: its burst shrinks with its limit.
            long localBurst = algorithm.hasBurst() ? Math.max(1, (long) Math.ceil((double) burst * localLimit / limit)) : localLimit;
            Rule localRule = rule.toBuilder().limit(localLimit).burst(localBurst).maxDelay(Duration.ZERO).build();
            // The fallback delays as the shared rule does (its burst scaled with its limit holds as
            // much delay, the bound rounded up).
            localRule = localRule.withMaxDelay(maxDelay);
            if (onFailure == OnFailure.LOCAL && cost > localRule.capacity()) {
                values.problem(p + "local-limit", Long.toString(localLimit), "must leave room for the rule's cost ("
                        + cost + ") with on-failure=local: the in-process " + (algorithm.hasBurst()
                        ? "burst (" + localBurst + ", the rule's burst scaled to it)" : "limit")
                        + " is below it, and a request could never be allowed while Valkey is down");
                return Optional.empty();
            }
            Optional<PlanSpec> plan = planReader.spec(p);
            Map<String, Rule> plans = planReader.plans(p, rule, plan, cost);
            if (values.problems().size() > before) {
                return Optional.empty();
            }
            LocalLeaseReader.Lease lease = localLeases.read(p, rule, cost, plans.values(), outcome.isPresent());
            if (!maxDelay.isZero() && lease.size() > 0) {
                values.problem(p + "local-lease", values.raw(p + "local-lease").orElse(Long.toString(lease.size())),
                        "cannot be set with " + p + "max-delay=" + values.raw(p + "max-delay").orElse("") + ": a lease "
                        + "serves units it holds now, never a slot to come");
            }
            if (costFrom.isPresent() && lease.size() > 0) {
                values.problem(p + "local-lease", values.raw(p + "local-lease").orElse(Long.toString(lease.size())),
                        "cannot be set with " + p + "cost-from=" + costFrom.get() + ": a cost known after the "
                        + "response is charged to Valkey, and units a lease took ahead would be counted apart from it");
            }
            if (values.problems().size() > before) {
                return Optional.empty();
            }
            return Optional.of(new RuleSettings(rule, match, exclude, methods, key, lowercaseKey, cost, onFailure,
                    localRule, outcome, plan, plans, lease.size(), lease.time(), scope, costFrom, quotaUnit));
        } catch (IllegalArgumentException e) {
            values.problems().add(RuleBounds.problem(values, p, algorithm.isConcurrency()
                    ? values.renamed(p + "permit-timeout", p + "lease-timeout") : p + "window",
                    algorithm, limit, burst, e));
            return Optional.empty();
        }
    }

    /**
     * The window, or for a concurrency rule the permit timeout ({@code permit-timeout}, once
     * {@code lease-timeout}, default
     * {@link SettingsReader#DEFAULT_PERMIT_TIMEOUT}), which the rule carries as its window; a
     * window may be a calendar period (see {@link WindowReader}).
     */
    private WindowReader.Window window(String p, Algorithm algorithm) {
        if (algorithm.isConcurrency()) {
            values.raw(p + "window").ifPresent(v -> values.problem(p + "window", v, "does not apply to concurrency, "
                    + "which limits requests in progress, not per window: set " + p + "permit-timeout"));
            values.raw(p + "time-zone").ifPresent(v -> values.problem(p + "time-zone", v, "does not apply to "
                    + "concurrency, which has no window"));
            return WindowReader.Window.rolling(values.duration(values.renamed(p + "permit-timeout", p + "lease-timeout"),
                    SettingsReader.DEFAULT_PERMIT_TIMEOUT, Duration.ofMillis(1)));
        }
        for (String timeout : List.of(p + "permit-timeout", p + "lease-timeout")) {
            values.raw(timeout).ifPresent(v -> values.problem(timeout, v,
                    "applies only to algorithm=concurrency, not to " + algorithm.id()));
        }
        return windows.read(p, algorithm, Optional.empty());
    }

    /**
     * {@code max-delay}: how long a request may be held for a slot to come rather than refused;
     * a bucket's only, neither counting rejections nor in shadow mode (see {@link Rule#maxDelay()}).
     */
    private Duration maxDelay(String p, Algorithm algorithm, boolean countRejected, boolean shadow) {
        if (values.raw(p + "max-delay").map(String::trim).filter("0"::equals).isPresent()) {
            // Off, as the default says: 0 needs no unit.
            return Duration.ZERO;
        }
        Duration delay = values.duration(p + "max-delay", Duration.ZERO, Duration.ZERO);
        if (delay.isZero()) {
            return delay;
        }
        String text = values.raw(p + "max-delay").orElse("");
        if (!algorithm.hasBurst()) {
            values.problem(p + "max-delay", text, "applies only to token-bucket and gcra, not to " + algorithm.id()
                    + ": only a bucket has slots at its rate (a window's next slot is its next window, where every "
                    + "delayed request would pass at once)");
        } else if (countRejected) {
            values.problem(p + "max-delay", text, "cannot be set with " + p + "count-rejected=true: a delayed "
                    + "request is allowed, not rejected");
        } else if (shadow) {
            values.problem(p + "max-delay", text, "cannot be set with " + p + "shadow=true: a shadow rule never "
                    + "holds a request back");
        } else if (delay.getNano() % 1_000_000 != 0) {
            values.problem(p + "max-delay", text, "must be a whole number of milliseconds");
        }
        return delay;
    }

    /** Whether the rule's bucket keeps the debt of that much delay whole; reports it when not. */
    private boolean maxDelayFits(String p, Rule rule, Duration maxDelay) {
        try {
            rule.withMaxDelay(maxDelay);
            return true;
        } catch (IllegalArgumentException e) {
            values.problem(p + "max-delay", values.raw(p + "max-delay").orElse(""), e.getMessage()
                    .replaceFirst("^rule '[^']*': max delay \\S+ ", ""));
            return false;
        }
    }

    /**
     * {@code cost-from}: {@code header:<name>} or {@code attribute:<name>}, on an algorithm that
     * can go into debt (not a sliding log, whose memory would grow with it, nor concurrency).
     */
    private Optional<CostSource> costFrom(String p, Algorithm algorithm, RuleSettings.Scope scope) {
        Optional<String> value = values.raw(p + "cost-from");
        if (value.isEmpty()) {
            return Optional.empty();
        }
        Optional<CostSource> source = CostSource.parse(value.get());
        if (source.isEmpty()) {
            values.problem(p + "cost-from", value.get(), "is not a cost source: use header:<response header>, "
                    + "attribute:<request attribute> or returned (what an annotated method returned)");
        } else if (!Charges.supports(algorithm)) {
            values.problem(p + "cost-from", value.get(), "does not apply to " + algorithm.id() + ": a cost known after "
                    + "the response can put a key into debt only with fixed-window, sliding-window-counter, token-bucket "
                    + "or gcra");
            return Optional.empty();
        } else if (source.get().kind() == CostSource.Kind.RETURNED && scope != RuleSettings.Scope.METHOD) {
            values.problem(p + "cost-from", value.get(), "applies only to a rule with " + p + "scope=method: only an "
                    + "annotated method returns a value");
            return Optional.empty();
        }
        return source;
    }

    /**
     * {@code quota-unit}: a token of lower-case letters, digits and '-' (the draft's registered
     * units are {@code requests}, {@code content-bytes} and {@code concurrent-requests}); not on
     * a concurrency rule, whose unit is {@code concurrent-requests}; {@code requests} is the
     * default, not written.
     */
    private Optional<String> quotaUnit(String p, Algorithm algorithm) {
        Optional<String> value = values.raw(p + "quota-unit").map(String::trim);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        if (algorithm.isConcurrency()) {
            values.problem(p + "quota-unit", value.get(), "does not apply to concurrency, whose unit is "
                    + "concurrent-requests");
            return Optional.empty();
        }
        if (!QUOTA_UNIT.matcher(value.get()).matches()) {
            values.problem(p + "quota-unit", value.get(), "is not a quota unit: lower-case letters, digits and '-', "
                    + "starting with a letter, at most 32 (e.g. requests, content-bytes, tokens)");
            return Optional.empty();
        }
        return value.get().equals("requests") ? Optional.empty() : value;
    }

    /**
     * {@code count-when} or {@code refund-when}: at most one of them, not on a concurrency rule,
     * and not with {@code count-rejected} when it gives a 429 back.
     *
     * <p>The units of a rule counting by outcome follow the response's status, and a request the
     * filter rejects is a response with status 429, whichever rule rejected it. count-rejected
     * makes a rejection take units; with a condition that gives 429 back it would take them
     * against the condition's own word (a rejection by another rule charging a count-when rule
     * whose statuses do not include 429). Refused rather than silently resolved either way: the
     * operator says whether rejected attempts count, by listing 429 or dropping count-rejected.
     */
    private Optional<OutcomeCondition> outcome(String p, Algorithm algorithm, boolean countRejected) {
        Optional<String> countWhen = values.raw(p + "count-when");
        Optional<String> refundWhen = values.raw(p + "refund-when");
        if (algorithm.isConcurrency() && (countWhen.isPresent() || refundWhen.isPresent())) {
            String property = p + (countWhen.isPresent() ? "count-when" : "refund-when");
            values.problem(property, countWhen.or(() -> refundWhen).get(), "does not apply to concurrency: its "
                    + "lease is released after every response");
            return Optional.empty();
        }
        if (countWhen.isPresent() && refundWhen.isPresent()) {
            values.problem(p + "refund-when", refundWhen.get(), "cannot be set together with " + p + "count-when="
                    + countWhen.get() + ": give the statuses that count, or those given back, not both");
            return Optional.empty();
        }
        String property = p + (countWhen.isPresent() ? "count-when" : "refund-when");
        Optional<String> value = countWhen.or(() -> refundWhen);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        List<String> problems = new ArrayList<>();
        Optional<OutcomeCondition> condition = OutcomeCondition.parse(countWhen.isPresent(), value.get(), problems);
        problems.forEach(problem -> values.problem(property, value.get(), problem));
        if (countRejected && condition.isPresent() && condition.get().givesBack(TOO_MANY_REQUESTS)) {
            values.problem(p + "count-rejected", values.raw(p + "count-rejected").orElse("true"), "cannot be set with "
                    + condition.get() + ", which gives a 429 back: a rejected request is answered 429 and its units "
                    + "follow that status, so what count-rejected records would not count; "
                    + (countWhen.isPresent() ? "add 429 to " + property : "leave 429 out of " + property)
                    + " to count rejected attempts, or drop count-rejected");
        }
        return condition;
    }
}
