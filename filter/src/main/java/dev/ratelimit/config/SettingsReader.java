package dev.ratelimit.config;

import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.net.Cidr;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Reads every {@code ratelimit.*} setting into a validated {@link FilterSettings}, once, at
 * start-up. It does not stop at the first problem: every problem is collected, each naming the
 * property, its value and the rule broken, and all are reported together.
 */
public final class SettingsReader {

    /** The prefix of every property. */
    public static final String PREFIX = "ratelimit.";

    private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}");
    /** How long a concurrency rule's permit lives when its holder never releases it. */
    public static final Duration DEFAULT_PERMIT_TIMEOUT = Duration.ofSeconds(60);

    /**
     * Settings renamed, by the last part of their name (a rule's {@code ratelimit.rule.<name>.} or
     * a global one's {@code ratelimit.}), new name to old: the old name is still read, with a
     * warning, until 2.0. A name is API: it disappears only through this table.
     */
    public static final Map<String, String> RENAMED = Map.of("permit-timeout", "lease-timeout");

    /** Under the reader's name, where operators already look for (and configure) its warnings. */
    private static final System.Logger LOG = System.getLogger(SettingsReader.class.getName());

    private final SettingsSource source;
    private final SettingsValues values;
    private final Consumer<String> warnings;

    private SettingsReader(SettingsSource source, Consumer<String> warnings) {
        this.source = source;
        this.values = new SettingsValues(source);
        this.warnings = warnings;
    }

    /**
     * Reads and validates the settings.
     *
     * @param source where the settings come from
     * @return the settings
     * @throws InvalidSettingsException listing every problem found
     */
    public static FilterSettings read(SettingsSource source) {
        return read(source, SettingsReader::warn);
    }

    /**
     * Reads and validates the settings, handing what they hold but nothing enforces (a rule
     * configured but not listed, an environment variable that matches no setting) to the caller
     * rather than to the log: a refresh that reads them again and again logs a warning once.
     *
     * @param source   where the settings come from
     * @param warnings told of each warning, a line of text
     * @return the settings
     * @throws InvalidSettingsException listing every problem found
     */
    public static FilterSettings read(SettingsSource source, Consumer<String> warnings) {
        return new SettingsReader(source, warnings).readAll();
    }

    /**
     * The default of every setting read with one, by name (a rule's as read for the rule the
     * source lists), as the settings reference writes it: the reader's own definitions, against
     * which the reference is checked.
     *
     * @param source settings that read without a problem
     * @return the defaults, in the order read
     */
    static Map<String, String> defaults(SettingsSource source) {
        SettingsReader reader = new SettingsReader(source, warning -> { });
        reader.readAll();
        return reader.values.defaults();
    }

    /**
     * Logs a warning of a reading, as {@link #read(SettingsSource)} does.
     *
     * @param warning the warning
     */
    public static void warn(String warning) {
        LOG.log(System.Logger.Level.WARNING, warning);
    }

    /**
     * The global settings, read here in the order of the settings tables; each listed rule is
     * read by {@link RuleReader} (its plans by {@link PlanReader}), and what nothing read is
     * reported by {@link UnreadSettings}. The order of the reads is the order of the problems.
     */
    private FilterSettings readAll() {
        boolean enabled = values.bool("ratelimit.enabled", true);
        if (!enabled && values.problems().isEmpty()) {
            // A kill switch must work even while the rest of the settings are broken.
            return new FilterSettings(false, Optional.empty(), ValkeyRateLimiter.DEFAULT_PIPELINES,
                    ValkeyRateLimiter.DEFAULT_KEY_PREFIX, false,
                    List.of(), "X-Forwarded-For", 64, HeaderMode.DRAFT, false, Duration.ofSeconds(1), 0, Duration.ofSeconds(1),
                    0, ResilientRateLimiter.DEFAULT_DENY_CACHE_HOLD, 1, List.of(), Optional.empty(),
                    FilterSettings.LimitProviderSettings.DEFAULTS, ResilientRateLimiter.DEFAULT_NEAR_LIMIT_RATIO, 0);
        }
        Optional<String> valkeyUrl = values.raw("ratelimit.valkey.url");
        Duration timeout = values.duration("ratelimit.valkey.timeout", ValkeySettings.DEFAULT_SOCKET_TIMEOUT, Duration.ofMillis(1));
        Duration connectTimeout = values.duration("ratelimit.valkey.connect-timeout", ValkeySettings.DEFAULT_CONNECT_TIMEOUT,
                Duration.ofMillis(1));
        int poolMaxTotal = (int) values.number("ratelimit.valkey.pool.max-total", ValkeySettings.DEFAULT_POOL_MAX_TOTAL, 1, 10_000);
        int idle = (int) values.number("ratelimit.valkey.pool.max-idle", poolMaxTotal, 0, 10_000);
        if (idle > poolMaxTotal) {
            values.problem("ratelimit.valkey.pool.max-idle", Integer.toString(idle),
                    "must be at most ratelimit.valkey.pool.max-total (" + poolMaxTotal + ")");
        }
        // Reported once, above, not again by the connection's own check.
        int poolMaxIdle = Math.min(idle, poolMaxTotal);
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
        Optional<ValkeySettings> valkey = valkeyUrl.flatMap(url -> {
            // Named here: the settings' own check speaks of the URL, not of the property.
            Optional<String> problem = ValkeySettings.urlProblem(url);
            if (problem.isPresent()) {
                values.problem("ratelimit.valkey.url", ValkeySettings.redact(url), problem.get());
                return Optional.empty();
            }
            try {
                ValkeySettings read = ValkeySettings.of(url).withConnectTimeout(connectTimeout).withSocketTimeout(timeout)
                        .withPool(poolMaxTotal, poolMaxIdle).withPoolMaxWait(poolMaxWait).withCluster(cluster);
                ValkeySettings trusting = tlsCaFile.map(read::withTlsCaFile).orElse(read);
                return Optional.of(sentinel.map(s -> trusting.withSentinel(s.master(), s.nodes())).orElse(trusting));
            } catch (IllegalArgumentException e) {
                values.problems().add("ratelimit.valkey.*: " + e.getMessage());
                return Optional.empty();
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
        int maxDelayed = (int) values.number("ratelimit.max-delayed-requests",
                FilterSettings.DEFAULT_MAX_DELAYED_REQUESTS, 0, 1_000_000);
        Optional<Duration> refresh = values.raw("ratelimit.refresh").filter(v -> !v.trim().equals("off"))
                .map(v -> values.parseDuration("ratelimit.refresh", v, Duration.ofMillis(100)));

        List<RuleSettings> ruleSettings = new ArrayList<>();
        RuleReader rules = new RuleReader(values);
        Set<String> listed = new LinkedHashSet<>();
        for (String name : values.list("ratelimit.rules")) {
            if (!Rule.isValidName(name)) {
                values.problem("ratelimit.rules", name, "is not a valid rule name: use 1 to 64 letters, digits, '.', '_' or '-'");
            } else if (!listed.add(name)) {
                values.problem("ratelimit.rules", name, "is listed twice");
            } else {
                rules.read(name).ifPresent(ruleSettings::add);
            }
        }
        if (listed.isEmpty() && values.problems().isEmpty()) {
            values.problems().add(UnreadSettings.noRateLimitProperty(source)
                    ? "no ratelimit.* property was found at all: " + source.whereLooked() + ". In a WAR the file is "
                            + "WEB-INF/classes/META-INF/microprofile-config.properties (Maven: "
                            + "src/main/resources/META-INF/microprofile-config.properties), not the WAR's own META-INF/; "
                            + "or set ratelimit.enabled=false"
                    : "ratelimit.rules is empty: list the rules to enforce (e.g. ratelimit.rules=api,login), "
                            + "or set ratelimit.enabled=false");
        }
        values.renamings().forEach(warnings);
        UnreadSettings.report(values, listed, warnings);
        if (!values.problems().isEmpty()) {
            throw new InvalidSettingsException(values.problems());
        }
        return new FilterSettings(enabled, valkey, pipelines, keyPrefix, clientClock, trustedProxies, clientIpHeader,
                ipv6Prefix, headers, headersOnRedirects, failureRetryAfter, breakerFailures, breakerOpenFor,
                denyCache ? denyCacheSize : 0, denyCacheHold, localMaxKeys, ruleSettings, refresh, limitProvider,
                nearLimitRatio, maxDelayed);
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
                values.problem("ratelimit.valkey.sentinel.nodes", node, "must be host:port: a host name, an IPv4 "
                        + "address or an [IPv6] one, and a port from 1 to 65535");
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
}
