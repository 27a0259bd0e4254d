package dev.ratelimit.valkey;

import dev.ratelimit.valkey.connection.PipelinedCalls;
import dev.ratelimit.valkey.script.LimiterScript;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;

/**
 * The client a {@link ValkeyRateLimiter} talks through, and how its function calls go on the
 * wire: each on its own, or with other threads' calls in a pipeline ({@link PipelinedCalls}).
 *
 * @param client       the client, given or made from settings
 * @param ownsClient   whether the limiter made it and so closes it
 * @param endpoint     what failures name: the redacted URL, or just "Valkey" for a given client
 * @param cluster      whether it is a cluster client: claims in different slots then cannot share
 *                     one function call
 * @param tryAgainFor  how long a call refused with TRYAGAIN (a slot moving) is tried again:
 *                     the socket timeout on a cluster, zero elsewhere
 * @param functionCalls how a function call is sent
 */
record LimiterClient(UnifiedJedis client, boolean ownsClient, String endpoint, boolean cluster,
                     Duration tryAgainFor, LimiterScript.FunctionCalls functionCalls) {

    /**
     * Takes the given client, or makes one from the settings (exactly one of them is set).
     *
     * @param settings  the settings, or null when a client is given
     * @param given     the caller's client, or null
     * @param pipelines most pipelines on the wire at once; 0 sends every call on its own
     * @return the client and how calls are sent on it
     */
    static LimiterClient open(ValkeySettings settings, UnifiedJedis given, int pipelines) {
        UnifiedJedis client;
        boolean owns;
        String endpoint;
        if (given != null) {
            client = given;
            owns = false;
            endpoint = "Valkey";
        } else {
            if (!settings.cluster() && settings.sentinel().isEmpty()) {
                // Load what closing a client needs now: a container undeploying the application
                // may refuse to load classes by the time close() runs. No connection is opened.
                ValkeyClients.create(settings).close();
            }
            client = ValkeyClients.create(settings);
            owns = true;
            endpoint = "Valkey at " + settings.redactedUrl();
        }
        boolean cluster = client instanceof RedisClusterClient;
        // A given client's own timeouts bound its calls; the default settings bound the waits here.
        ValkeySettings bounds = settings != null ? settings : ValkeySettings.of("redis://localhost");
        LimiterScript.FunctionCalls functionCalls;
        // A cluster pipeline cannot follow a redirection; each cluster call is sent on its own.
        if (pipelines == 0 || cluster) {
            functionCalls = client::fcall;
        } else {
            long maxWait = bounds.connectTimeout().plus(bounds.poolMaxWait()).plus(bounds.socketTimeout()).toNanos();
            functionCalls = new PipelinedCalls(client, pipelines, maxWait)::fcall;
        }
        return new LimiterClient(client, owns, endpoint, cluster,
                cluster ? bounds.socketTimeout() : Duration.ZERO, functionCalls);
    }

    /** Closes the client if the limiter made it; a given client is the caller's to close. */
    void close() {
        if (ownsClient) {
            client.close();
        }
    }
}
