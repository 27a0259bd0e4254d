package dev.ratelimit.config;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.net.Cidr;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads every {@code ratelimit.*} setting into a validated {@link FilterSettings}, once, at
 * start-up. It does not stop at the first problem: every problem is collected, each naming the
 * property, its value and the rule broken, and all are reported together.
 */
public final class SettingsReader {

    /** The prefix of every property. */
    public static final String PREFIX = "ratelimit.";

    private static final System.Logger LOG = System.getLogger(SettingsReader.class.getName());
    private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}");
    private static final Pattern METHOD = Pattern.compile("[A-Za-z]{1,32}");
    /** The status of a request the filter rejects. */
    private static final int TOO_MANY_REQUESTS = 429;
    /** How long a concurrency rule's lease lives when its holder never releases it. */
    public static final Duration DEFAULT_LEASE_TIMEOUT = Duration.ofSeconds(60);

    private final SettingsSource source;
    private final SettingsValues values;

    private SettingsReader(SettingsSource source) {
        this.source = source;
        this.values = new SettingsValues(source);
    }

    /**
     * Reads and validates the settings.
     *
     * @param source where the settings come from
     * @return the settings
     * @throws InvalidSettingsException listing every problem found
     */
    public static FilterSettings read(SettingsSource source) {
        return new SettingsReader(source).readAll();
    }

    private FilterSettings readAll() {
        boolean enabled = values.bool("ratelimit.enabled", true);
        if (!enabled && values.problems().isEmpty()) {
            // A kill switch must work even while the rest of the settings are broken.
            return new FilterSettings(false, Optional.empty(), ValkeySettings.DEFAULT_SOCKET_TIMEOUT,
                    ValkeySettings.DEFAULT_CONNECT_TIMEOUT, ValkeySettings.DEFAULT_POOL_MAX_TOTAL,
                    ValkeySettings.DEFAULT_POOL_MAX_TOTAL, ValkeySettings.DEFAULT_POOL_MAX_WAIT, ValkeyRateLimiter.DEFAULT_PIPELINES,
                    ValkeyRateLimiter.DEFAULT_KEY_PREFIX, false,
                    List.of(), "X-Forwarded-For", 64, HeaderMode.DRAFT, false, Duration.ofSeconds(1), 0, Duration.ofSeconds(1),
                    0, ResilientRateLimiter.DEFAULT_DENY_CACHE_HOLD, 1, Optional.empty(), false, Optional.empty(),
                    List.of(), Optional.empty(),
                    FilterSettings.LimitProviderSettings.DEFAULTS, ResilientRateLimiter.DEFAULT_NEAR_LIMIT_RATIO);
        }
        Optional<String> valkeyUrl = values.raw("ratelimit.valkey.url");
        Duration timeout = values.duration("ratelimit.valkey.timeout", ValkeySettings.DEFAULT_SOCKET_TIMEOUT, Duration.ofMillis(1));
        Duration connectTimeout = values.duration("ratelimit.valkey.connect-timeout", ValkeySettings.DEFAULT_CONNECT_TIMEOUT,
                Duration.ofMillis(1));
        int poolMaxTotal = (int) values.number("ratelimit.valkey.pool.max-total", ValkeySettings.DEFAULT_POOL_MAX_TOTAL, 1, 10_000);
        int poolMaxIdle = (int) values.number("ratelimit.valkey.pool.max-idle", poolMaxTotal, 0, 10_000);
        Duration poolMaxWait = values.duration("ratelimit.valkey.pool.max-wait", ValkeySettings.DEFAULT_POOL_MAX_WAIT,
                Duration.ofMillis(1));
        int pipelines = (int) values.number("ratelimit.valkey.pipelines", ValkeyRateLimiter.DEFAULT_PIPELINES, 0, 64);
        Optional<Path> tlsCaFile = values.raw("ratelimit.valkey.tls.ca-file").map(file -> {
            Path path = Path.of(file);
            if (!Files.isReadable(path)) {
                values.problem("ratelimit.valkey.tls.ca-file", file, "cannot be read");
            }
            return path;
        });
        boolean cluster = values.bool("ratelimit.valkey.cluster", false);
        Optional<ValkeySettings.Sentinel> sentinel = sentinel(cluster);
        valkeyUrl.ifPresent(url -> {
            try {
                new ValkeySettings(url, connectTimeout, timeout, poolMaxTotal, poolMaxIdle, poolMaxWait, tlsCaFile, cluster,
                        sentinel);
            } catch (IllegalArgumentException e) {
                values.problems().add("ratelimit.valkey.*: " + e.getMessage());
            }
        });
        String keyPrefix = values.raw("ratelimit.key-prefix").orElse(ValkeyRateLimiter.DEFAULT_KEY_PREFIX);
        if (!ValkeyRateLimiter.isValidKeyPrefix(keyPrefix)) {
            values.problem("ratelimit.key-prefix", keyPrefix, "is invalid: use 1 to 64 letters, digits, ':', '.', '_' or '-'");
        }
        boolean clientClock = values.choice("ratelimit.clock", "server", List.of("server", "client")).equals("client");
        List<Cidr> trustedProxies = values.list("ratelimit.trusted-proxies").stream()
                .map(cidr -> Cidr.parse(cidr).or(() -> {
                    values.problem("ratelimit.trusted-proxies", cidr, "is not an IPv4 or IPv6 address or CIDR network");
                    return Optional.empty();
                }))
                .flatMap(Optional::stream).toList();
        String clientIpHeader = values.text("ratelimit.client-ip-header", "X-Forwarded-For", HEADER_NAME,
                "must be an HTTP header name");
        int ipv6Prefix = (int) values.number("ratelimit.ipv6-prefix", 64, 1, 128);
        HeaderMode headers = values.choice("ratelimit.headers", HeaderMode.DRAFT, HeaderMode.values(), HeaderMode::id);
        // Off by default: the draft warns that a low r on a redirection can keep a client from following it.
        boolean headersOnRedirects = values.bool("ratelimit.headers.on-redirects", false);
        Duration failureRetryAfter = values.duration("ratelimit.failure-retry-after", Duration.ofSeconds(1), Duration.ofSeconds(1));
        int breakerFailures = (int) values.number("ratelimit.breaker.failures", ValkeyRateLimiter.DEFAULT_BREAKER_FAILURES, 0, 1_000_000);
        Duration breakerOpenFor = values.duration("ratelimit.breaker.open-for", ValkeyRateLimiter.DEFAULT_BREAKER_OPEN_FOR,
                Duration.ofMillis(1));
        boolean denyCache = values.bool("ratelimit.deny-cache.enabled", true);
        int denyCacheSize = (int) values.number("ratelimit.deny-cache.max-entries", 10_000, 1, 10_000_000);
        Duration denyCacheHold = values.duration("ratelimit.deny-cache.max-hold",
                ResilientRateLimiter.DEFAULT_DENY_CACHE_HOLD, Duration.ofMillis(1));
        int localMaxKeys = (int) values.number("ratelimit.local.max-keys", LocalRateLimiter.DEFAULT_MAX_KEYS, 1, 100_000_000);
        FilterSettings.LimitProviderSettings defaults = FilterSettings.LimitProviderSettings.DEFAULTS;
        FilterSettings.LimitProviderSettings limitProvider = new FilterSettings.LimitProviderSettings(
                values.duration("ratelimit.limit-provider.cache-ttl", defaults.cacheTtl(), Duration.ofMillis(1)),
                (int) values.number("ratelimit.limit-provider.cache-size", defaults.cacheSize(), 1, 10_000_000),
                values.duration("ratelimit.limit-provider.timeout", defaults.timeout(), Duration.ofMillis(1)));
        double nearLimitRatio = values.raw("ratelimit.metrics.near-limit-ratio").map(v -> {
            try {
                double ratio = Double.parseDouble(v.trim());
                if (ratio > 0 && ratio <= 1) {
                    return ratio;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            values.problem("ratelimit.metrics.near-limit-ratio", v, "must be a number above 0 and at most 1 (0.8: "
                    + "80 % of the quota used)");
            return ResilientRateLimiter.DEFAULT_NEAR_LIMIT_RATIO;
        }).orElse(ResilientRateLimiter.DEFAULT_NEAR_LIMIT_RATIO);
        Optional<Duration> refresh = values.raw("ratelimit.refresh").filter(v -> !v.trim().equals("off"))
                .map(v -> values.parseDuration("ratelimit.refresh", v, Duration.ofMillis(100)));

        List<RuleSettings> rules = new ArrayList<>();
        Set<String> listed = new LinkedHashSet<>();
        for (String name : values.list("ratelimit.rules")) {
            if (!Rule.isValidName(name)) {
                values.problem("ratelimit.rules", name, "is not a valid rule name: use 1 to 64 letters, digits, '.', '_' or '-'");
            } else if (!listed.add(name)) {
                values.problem("ratelimit.rules", name, "is listed twice");
            } else {
                readRule(name).ifPresent(rules::add);
            }
        }
        if (listed.isEmpty() && values.problems().isEmpty()) {
            values.problems().add(noRateLimitProperty()
                    ? "no ratelimit.* property was found at all: " + source.whereLooked() + ". In a WAR the file is "
                            + "WEB-INF/classes/META-INF/microprofile-config.properties (Maven: "
                            + "src/main/resources/META-INF/microprofile-config.properties), not the WAR's own META-INF/; "
                            + "or set ratelimit.enabled=false"
                    : "ratelimit.rules is empty: list the rules to enforce (e.g. ratelimit.rules=api,login), "
                            + "or set ratelimit.enabled=false");
        }
        reportUnread(listed);
        if (!values.problems().isEmpty()) {
            throw new InvalidSettingsException(values.problems());
        }
        return new FilterSettings(enabled, valkeyUrl, timeout, connectTimeout, poolMaxTotal, poolMaxIdle, poolMaxWait,
                pipelines, keyPrefix, clientClock, trustedProxies, clientIpHeader, ipv6Prefix, headers, headersOnRedirects,
                failureRetryAfter, breakerFailures, breakerOpenFor, denyCache ? denyCacheSize : 0, denyCacheHold, localMaxKeys, tlsCaFile, cluster,
                sentinel, rules, refresh, limitProvider, nearLimitRatio);
    }

    /** Whether no property of ours is set at all, in the file, the system properties or the environment. */
    private boolean noRateLimitProperty() {
        for (String name : source.names()) {
            if (name.regionMatches(true, 0, PREFIX, 0, PREFIX.length())
                    || name.regionMatches(true, 0, "RATELIMIT_", 0, "RATELIMIT_".length())) {
                return false;
            }
        }
        return true;
    }

    /** The Sentinel-managed primary: both settings or neither, and not with a cluster. */
    private Optional<ValkeySettings.Sentinel> sentinel(boolean cluster) {
        Optional<String> master = values.raw("ratelimit.valkey.sentinel.master");
        List<String> nodes = values.list("ratelimit.valkey.sentinel.nodes");
        if (master.isEmpty()) {
            if (!nodes.isEmpty()) {
                values.problem("ratelimit.valkey.sentinel.nodes", String.join(",", nodes),
                        "needs ratelimit.valkey.sentinel.master, the name the sentinels know the primary by");
            }
            return Optional.empty();
        }
        if (nodes.isEmpty()) {
            values.problem("ratelimit.valkey.sentinel.master", master.get(),
                    "needs ratelimit.valkey.sentinel.nodes, the sentinels as host:port,host:port");
            return Optional.empty();
        }
        if (cluster) {
            values.problem("ratelimit.valkey.sentinel.master", master.get(),
                    "cannot be used with ratelimit.valkey.cluster=true: a cluster fails over by itself");
            return Optional.empty();
        }
        int before = values.problems().size();
        for (String node : nodes) {
            try {
                new ValkeySettings.Sentinel(master.get(), List.of(node));
            } catch (IllegalArgumentException e) {
                values.problem("ratelimit.valkey.sentinel.nodes", node, "must be host:port with a port from 1 to 65535");
            }
        }
        if (values.problems().size() > before) {
            return Optional.empty();
        }
        try {
            return Optional.of(new ValkeySettings.Sentinel(master.get(), nodes));
        } catch (IllegalArgumentException e) {
            values.problem("ratelimit.valkey.sentinel.master", master.get(), "must be a name without surrounding spaces");
            return Optional.empty();
        }
    }

    private Optional<RuleSettings> readRule(String name) {
        String p = PREFIX + "rule." + name + ".";
        int before = values.problems().size();
        Algorithm algorithm = values.choice(p + "algorithm", Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.values(), Algorithm::id);
        long limit = values.required(p + "limit").map(v -> values.parseNumber(p + "limit", v, 1, Long.MAX_VALUE)).orElse(1L);
        Duration window = window(p, algorithm);
        long burst = limit;
        Optional<String> burstText = values.raw(p + "burst");
        if (burstText.isPresent()) {
            if (!algorithm.hasBurst()) {
                values.problem(p + "burst", burstText.get(), "applies only to token-bucket and gcra, not to " + algorithm.id());
            } else {
                burst = values.parseNumber(p + "burst", burstText.get(), 1, Long.MAX_VALUE);
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
            Rule rule = new Rule(name, algorithm, limit, window, burst, countRejected, shadow);
            if (cost > rule.capacity()) {
                values.problem(p + "cost", Long.toString(cost), "must not exceed the rule's "
                        + (algorithm.hasBurst() ? "burst" : "limit") + " (" + rule.capacity() + "): it could never be allowed");
                return Optional.empty();
            }
            // The local rule keeps the shape of the shared one: its burst shrinks with its limit.
            long localBurst = algorithm.hasBurst() ? Math.max(1, (long) Math.ceil((double) burst * localLimit / limit)) : localLimit;
            Rule localRule = new Rule(name, algorithm, localLimit, window, localBurst, countRejected, shadow);
            Optional<PlanSpec> plan = planSpec(p);
            Map<String, Rule> plans = plans(p, rule, plan, cost);
            if (values.problems().size() > before) {
                return Optional.empty();
            }
            return Optional.of(new RuleSettings(rule, match, exclude, methods, key, lowercaseKey, cost, onFailure,
                    localRule, outcome, plan, plans));
        } catch (IllegalArgumentException e) {
            values.problems().add(p + "*: " + e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * The window, or for a concurrency rule the lease timeout ({@code lease-timeout}, default
     * {@link #DEFAULT_LEASE_TIMEOUT}), which the rule carries as its window.
     */
    private Duration window(String p, Algorithm algorithm) {
        if (algorithm.isConcurrency()) {
            values.raw(p + "window").ifPresent(v -> values.problem(p + "window", v, "does not apply to concurrency, "
                    + "which limits requests in progress, not per window: set " + p + "lease-timeout"));
            return values.duration(p + "lease-timeout", DEFAULT_LEASE_TIMEOUT, Duration.ofMillis(1));
        }
        values.raw(p + "lease-timeout").ifPresent(v -> values.problem(p + "lease-timeout", v,
                "applies only to algorithm=concurrency, not to " + algorithm.id()));
        return values.required(p + "window").map(v -> values.parseDuration(p + "window", v, Duration.ofMillis(1)))
                .orElse(Duration.ofSeconds(1));
    }

    private Optional<PlanSpec> planSpec(String p) {
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
    private Map<String, Rule> plans(String p, Rule base, Optional<PlanSpec> spec, long cost) {
        String planPrefix = p + "plan.";
        Set<String> names = new TreeSet<>();
        for (String name : source.names()) {
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
            Duration window = base.algorithm().isConcurrency() ? base.window()
                    : values.duration(q + "window", base.window(), Duration.ofMillis(1));
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
            try {
                plans.put(plan, new Rule(base.name(), base.algorithm(), limit, window, burst, base.countRejected(),
                        base.shadow()));
            } catch (IllegalArgumentException e) {
                values.problems().add(q + "*: " + e.getMessage());
            }
        }
        return plans;
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

    /**
     * Names under {@code ratelimit.} that nothing read. A typo in the properties file or a system
     * property fails the deployment. A rule configured but not listed (an environment that runs
     * fewer rules than the file defines) and an environment variable that matches no setting are
     * logged once as warnings and ignored; an environment variable that is the environment form
     * of a setting read (hyphens included, {@code RATELIMIT_KEY_PREFIX}) is that setting.
     */
    private void reportUnread(Set<String> listed) {
        Set<String> readForms = new HashSet<>();
        for (String name : values.read()) {
            readForms.add(SettingsSource.environmentForm(name));
        }
        TreeMap<String, List<String>> unlistedRules = new TreeMap<>();
        Set<String> unknownVariables = new TreeSet<>();
        for (String name : new TreeSet<>(source.names())) {
            if (!name.startsWith(PREFIX) || values.read().contains(name)) {
                continue;
            }
            if (source.fromEnvironment(name)) {
                String variable = SettingsSource.environmentForm(name);
                if (!readForms.contains(variable)) {
                    unknownVariables.add(variable);
                }
                continue;
            }
            String rest = name.substring(PREFIX.length());
            int dot = rest.indexOf('.', "rule.".length());
            if (rest.startsWith("rule.") && dot > 0 && !listed.contains(rest.substring("rule.".length(), dot))) {
                unlistedRules.computeIfAbsent(rest.substring("rule.".length(), dot), k -> new ArrayList<>()).add(name);
            } else {
                values.problems().add(name + " is not a known setting (a typo?)");
            }
        }
        unlistedRules.forEach((rule, names) -> LOG.log(System.Logger.Level.WARNING, "Rule ''{0}'' is configured ({1}) "
                + "but not listed in ratelimit.rules={2}: it is not enforced", rule, String.join(", ", names),
                String.join(",", listed)));
        if (!unknownVariables.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "Environment variables that match no rate-limit setting are ignored: "
                    + "{0}", String.join(", ", unknownVariables));
        }
    }
}
