package dev.ratelimit.cli;

import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.MicroProfileSettingsSource;
import dev.ratelimit.config.OperatorKeys;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.valkey.KeyInspector;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The settings and the Valkey an application uses, opened for one command: the rules by name,
 * the keys operators type turned into the keys the filter builds, and an inspector on the same
 * Valkey (standalone, Sentinel, cluster, TLS, ACL user) with the settings' key prefix and clock.
 */
final class Store implements AutoCloseable {

    /**
     * The least time a call may take: the application's timeouts are tens of milliseconds,
     * tight for an operator's machine further from Valkey than the application is.
     */
    private static final Duration LEAST_TIMEOUT = Duration.ofSeconds(2);

    private final FilterSettings settings;
    private final ValkeyRateLimiter limiter;

    private Store(FilterSettings settings, ValkeyRateLimiter limiter) {
        this.settings = settings;
        this.limiter = limiter;
    }

    /**
     * Reads the settings and connects (a cluster or Sentinel client connects at once).
     *
     * @throws Problem for settings that do not validate or name no Valkey, or a Valkey that cannot
     *                 be reached
     */
    static Store open(StoreOptions options) {
        FilterSettings settings = SettingsReader.read(options.settings == null
                ? MicroProfileSettingsSource.forClassLoader(Store.class.getClassLoader())
                : SettingsFile.read(options.settings));
        if (!settings.enabled() || settings.valkey().isEmpty()) {
            throw new Problem(!settings.enabled() ? "rate limiting is off in these settings (ratelimit.enabled=false)"
                    : "these settings name no Valkey (ratelimit.valkey.url): each application instance keeps its"
                    + " own state in process; a rule's MBean inspects and resets it there");
        }
        ValkeySettings configured = settings.valkey().get();
        ValkeySettings valkey = configured.withConnectTimeout(atLeast(configured.connectTimeout()))
                .withSocketTimeout(atLeast(configured.socketTimeout())).withPool(2, 2).withPoolMaxWait(LEAST_TIMEOUT);
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder().settings(valkey).keyPrefix(settings.keyPrefix())
                .pipelines(0).circuitBreaker(0, Duration.ofSeconds(1));
        if (settings.clientClock()) {
            builder.clientClock(System::currentTimeMillis);
        }
        try {
            return new Store(settings, builder.build());
        } catch (RuntimeException e) {
            throw new Problem("cannot reach Valkey at " + valkey.redactedUrl() + ": " + e.getMessage());
        }
    }

    private static Duration atLeast(Duration timeout) {
        return timeout.compareTo(LEAST_TIMEOUT) < 0 ? LEAST_TIMEOUT : timeout;
    }

    /** The inspector on this Valkey. */
    KeyInspector inspector() {
        return limiter.inspector();
    }

    /**
     * A rule by name.
     *
     * @throws Problem naming the rules there are
     */
    RuleSettings rule(String name) {
        return settings.rule(name).orElseThrow(() -> new Problem("no rule '" + name + "' in these settings; the rules are "
                + String.join(", ", settings.rules().stream().map(r -> r.rule().name()).toList())));
    }

    /**
     * The rule a request of this plan is decided by: the plan's limits, or the rule's own.
     *
     * @throws Problem for a plan the rule does not list
     */
    static Rule planRule(RuleSettings rule, Optional<String> plan) {
        if (plan.isEmpty()) {
            return rule.rule();
        }
        Rule chosen = rule.plans().get(plan.get());
        if (chosen == null) {
            throw new Problem("rule '" + rule.rule().name() + "' has no plan '" + plan.get() + "'"
                    + (rule.plans().isEmpty() ? "" : "; its plans are " + String.join(", ", rule.plans().keySet().stream().sorted().toList())));
        }
        return chosen;
    }

    /**
     * The key the filter builds for these values.
     *
     * @throws Problem for a wrong number of values, a value its part cannot be, or one the
     *                 locale could not decode
     */
    String key(RuleSettings rule, List<String> values) {
        for (String value : values) {
            // The JVM decodes arguments by the locale: under LANG=C a non-ASCII name arrives as
            // U+FFFD, whose hash is another key; "nothing to remove" would then be a lie.
            if (value.indexOf('\uFFFD') >= 0) {
                throw new Problem("the key value '" + value + "' holds characters the locale ("
                        + System.getProperty("sun.jnu.encoding") + ") could not decode; run with a UTF-8 locale,"
                        + " e.g. LC_ALL=C.UTF-8");
            }
        }
        try {
            return OperatorKeys.keyOf(rule, values, settings.ipv6Prefix());
        } catch (IllegalArgumentException e) {
            throw new Problem(e.getMessage());
        }
    }

    @Override
    public void close() {
        limiter.close();
    }

    /** A problem said in one line, exit status 1. */
    static final class Problem extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Problem(String message) {
            super(message, null, false, false);
        }
    }
}
