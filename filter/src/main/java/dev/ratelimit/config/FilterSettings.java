package dev.ratelimit.config;

import dev.ratelimit.net.Cidr;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Every setting of the filter, read and validated once at start-up. See
 * {@link dev.ratelimit.servlet.RateLimitFilter} for the property names and defaults.
 *
 * @param enabled          whether the filter limits anything
 * @param valkey           how to reach Valkey ({@code ratelimit.valkey.*}: the URL, timeouts, pool,
 *                         TLS, Cluster or Sentinel); empty, without a URL, means the in-process
 *                         limiter
 * @param pipelines        most pipelines of concurrent calls on the wire at once (0: none, every
 *                         call on its own connection)
 * @param keyPrefix        the first part of every state key
 * @param clientClock      whether time comes from the app server's clock instead of Valkey's
 * @param trustedProxies   peers whose forwarding headers are believed
 * @param clientIpHeader   the forwarding header to read: {@code X-Forwarded-For},
 *                         {@code Forwarded} or any other name (one address per hop, like
 *                         X-Forwarded-For)
 * @param ipv6Prefix       IPv6 client addresses are counted per network of this many bits
 * @param headers          which rate-limit header fields to send
 * @param headersOnRedirects whether 3xx responses carry the rate-limit fields too
 * @param failureRetryAfter the {@code Retry-After} of a 503 sent when a {@code closed} rule
 *                         cannot reach Valkey
 * @param breakerFailures  consecutive Valkey failures that open the circuit breaker (0: never)
 * @param breakerOpenFor   how long the breaker stays open before one probe call
 * @param denyCacheSize    most rule+key rejections remembered locally (0: no deny cache)
 * @param denyCacheHold    the longest a rejection is replayed from the deny cache
 * @param localMaxKeys     most keys the in-process limiter holds
 * @param rules            the rules, in the order of {@code ratelimit.rules}
 * @param refresh          how often the settings are read again, rules applied while running;
 *                         empty: never (the default)
 * @param limitProvider    how the application's {@code LimitProvider}, if it has one, is asked
 * @param nearLimitRatio   the share of a quota used from which an allowed request is reported as
 *                         near its limit
 * @param maxDelayedRequests the most requests this instance holds for a slot to come at once
 *                         ({@code max-delay}); past it a request that would be delayed is refused
 */
public record FilterSettings(boolean enabled, Optional<ValkeySettings> valkey, int pipelines, String keyPrefix,
                             boolean clientClock, List<Cidr> trustedProxies, String clientIpHeader, int ipv6Prefix,
                             HeaderMode headers, boolean headersOnRedirects, Duration failureRetryAfter, int breakerFailures,
                             Duration breakerOpenFor, int denyCacheSize, Duration denyCacheHold, int localMaxKeys,
                             List<RuleSettings> rules, Optional<Duration> refresh, LimitProviderSettings limitProvider,
                             double nearLimitRatio, int maxDelayedRequests) {

    /** The default of {@code ratelimit.max-delayed-requests}. */
    public static final int DEFAULT_MAX_DELAYED_REQUESTS = 1_000;

    /**
     * How the application's limit provider is asked.
     *
     * @param cacheTtl  how long an answer is used before the provider is asked again
     * @param cacheSize most answers kept (the least recently used is dropped)
     * @param timeout   the longest a request waits for an answer
     */
    public record LimitProviderSettings(Duration cacheTtl, int cacheSize, Duration timeout) {
        /** The defaults: 60 s, 10,000 answers, 50 ms. */
        public static final LimitProviderSettings DEFAULTS = new LimitProviderSettings(Duration.ofSeconds(60), 10_000,
                Duration.ofMillis(50));
    }

    /** Copies the lists. */
    public FilterSettings {
        trustedProxies = List.copyOf(trustedProxies);
        rules = List.copyOf(rules);
    }

    /**
     * The settings a refresh cannot change while running, by name, for telling which of them a
     * new reading changed: they are used only when the filter starts.
     *
     * @return property name to value, in a stable order
     */
    public java.util.Map<String, Object> startUpOnly() {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("ratelimit.enabled", enabled);
        m.put("ratelimit.valkey.url", valkey.map(v -> ValkeySettings.redact(v.url())));
        m.put("ratelimit.valkey.timeout", valkey.map(ValkeySettings::socketTimeout));
        m.put("ratelimit.valkey.connect-timeout", valkey.map(ValkeySettings::connectTimeout));
        m.put("ratelimit.valkey.pool.max-total", valkey.map(ValkeySettings::poolMaxTotal));
        m.put("ratelimit.valkey.pool.max-idle", valkey.map(ValkeySettings::poolMaxIdle));
        m.put("ratelimit.valkey.pool.max-wait", valkey.map(ValkeySettings::poolMaxWait));
        m.put("ratelimit.valkey.pipelines", pipelines);
        m.put("ratelimit.key-prefix", keyPrefix);
        m.put("ratelimit.clock", clientClock ? "client" : "server");
        m.put("ratelimit.breaker.failures", breakerFailures);
        m.put("ratelimit.breaker.open-for", breakerOpenFor);
        m.put("ratelimit.deny-cache.max-entries", denyCacheSize);
        m.put("ratelimit.deny-cache.max-hold", denyCacheHold);
        m.put("ratelimit.local.max-keys", localMaxKeys);
        m.put("ratelimit.valkey.tls.ca-file", valkey.flatMap(ValkeySettings::tlsCaFile));
        m.put("ratelimit.valkey.cluster", valkey.map(ValkeySettings::cluster));
        m.put("ratelimit.valkey.sentinel.*", valkey.flatMap(ValkeySettings::sentinel));
        m.put("ratelimit.refresh", refresh);
        m.put("ratelimit.limit-provider.*", limitProvider);
        m.put("ratelimit.metrics.near-limit-ratio", nearLimitRatio);
        // The shared limiter is built with each rule's local lease once, when it connects.
        for (RuleSettings rule : rules) {
            if (rule.localLease() > 0) {
                m.put("ratelimit.rule." + rule.rule().name() + ".local-lease",
                        rule.localLease() + " for " + Durations.format(rule.localLeaseTime()));
            }
        }
        return m;
    }

    /**
     * A rule by name.
     *
     * @param name the rule's name
     * @return the rule, or empty when {@code ratelimit.rules} does not list it
     */
    public Optional<RuleSettings> rule(String name) {
        return rules.stream().filter(r -> r.rule().name().equals(name)).findFirst();
    }

    /**
     * Shows everything but the Valkey password.
     *
     * @return the settings as text
     */
    @Override
    public String toString() {
        return "FilterSettings[enabled=" + enabled + ", valkey=" + valkey.map(ValkeySettings::toString).orElse("none")
                + ", rules=" + rules.stream().map(r -> r.rule().name()).toList() + "]";
    }
}
