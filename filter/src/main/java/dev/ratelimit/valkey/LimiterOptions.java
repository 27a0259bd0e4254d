package dev.ratelimit.valkey;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.valkey.lease.LeasePolicy;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * What a {@link ValkeyRateLimiter.Builder} was given, with its defaults and checks: the public
 * builder documents each setting and hands it here.
 */
final class LimiterOptions {

    ValkeySettings settings;
    UnifiedJedis client;
    private static final java.util.regex.Pattern PREFIX = java.util.regex.Pattern.compile("[A-Za-z0-9:._-]{1,64}");

    String keyPrefix = ValkeyRateLimiter.DEFAULT_KEY_PREFIX;
    LongSupplier clientClock;
    int breakerFailures = ValkeyRateLimiter.DEFAULT_BREAKER_FAILURES;
    Duration breakerOpenFor = ValkeyRateLimiter.DEFAULT_BREAKER_OPEN_FOR;
    RateLimitListener listener = RateLimitListener.NONE;
    int pipelines = ValkeyRateLimiter.DEFAULT_PIPELINES;
    final Map<String, LeasePolicy> leases = new HashMap<>();

    void pipelines(int pipelines) {
        if (pipelines < 0 || pipelines > 64) {
            throw new IllegalArgumentException("pipelines " + pipelines + " must be between 0 and 64");
        }
        this.pipelines = pipelines;
    }

    void circuitBreaker(int failures, Duration openFor) {
        if (failures < 0 || openFor == null || openFor.isNegative() || openFor.isZero()) {
            throw new IllegalArgumentException("circuit breaker: failures " + failures + " must be at least 0 and "
                    + "open-for " + openFor + " positive");
        }
        this.breakerFailures = failures;
        this.breakerOpenFor = openFor;
    }

    /** See {@link ValkeyRateLimiter#isValidKeyPrefix}. */
    static boolean isValidKeyPrefix(String keyPrefix) {
        return keyPrefix != null && PREFIX.matcher(keyPrefix).matches();
    }

    void keyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        if (!isValidKeyPrefix(keyPrefix)) {
            throw new IllegalArgumentException("key prefix '" + keyPrefix
                    + "' is invalid: use 1 to 64 letters, digits, ':', '.', '_' or '-'");
        }
        this.keyPrefix = keyPrefix;
    }

    void checkOneConnection() {
        if ((settings == null) == (client == null)) {
            throw new IllegalStateException("give the builder either settings(...) or client(...), not "
                    + (settings == null ? "neither" : "both"));
        }
    }

    /**
     * The clock leases are timed on: the client clock when one is set (the clock the decisions
     * use), else a monotonic one, which a wall-clock step cannot move.
     */
    LongSupplier leaseClock() {
        return clientClock != null ? clientClock : () -> System.nanoTime() / 1_000_000;
    }
}
