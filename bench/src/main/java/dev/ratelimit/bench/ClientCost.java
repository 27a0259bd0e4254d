package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import redis.clients.jedis.RedisClient;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What one decision costs the application's JVM: CPU time of the calling thread per decision,
 * for this limiter and for a bare pooled Jedis client calling the minimal script, one thread,
 * new keys, the same server.
 */
final class ClientCost {

    private ClientCost() {
    }

    /**
     * Measures both and prints them.
     *
     * @param url       the Valkey
     * @param decisions calls per measurement
     */
    static void measureAndPrint(String url, int decisions) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double ours;
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(url)).build()) {
            Rule rule = Rule.of("client-cost", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
            for (int i = 0; i < decisions / 4; i++) {
                limiter.acquire(rule, "warm" + i);
            }
            long start = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < decisions; i++) {
                limiter.acquire(rule, "k" + i);
            }
            ours = (threads.getCurrentThreadCpuTime() - start) / 1000.0 / decisions;
        }
        double bare;
        try (RedisClient jedis = RedisClient.create(java.net.URI.create(url))) {
            String sha = jedis.scriptLoad(new String(ClientCost.class.getResourceAsStream("minimal-token-bucket.lua")
                    .readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            for (int i = 0; i < decisions / 4; i++) {
                jedis.evalsha(sha, List.of("warm" + i), List.of("100", "1.6667", Long.toString(System.currentTimeMillis()), "1"));
            }
            long start = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < decisions; i++) {
                jedis.evalsha(sha, List.of("minimal:k" + i),
                        List.of("100", "1.6667", Long.toString(System.currentTimeMillis()), "1"));
            }
            bare = (threads.getCurrentThreadCpuTime() - start) / 1000.0 / decisions;
        }
        System.out.printf(Locale.ROOT, "%nClient CPU per decision (one thread, %d calls on new keys)%n", decisions);
        System.out.printf(Locale.ROOT, "%-28s %8.2f us %7.2fx bare Jedis%n", "ratelimit token-bucket", ours, ours / bare);
        System.out.printf(Locale.ROOT, "%-28s %8.2f us %7.2fx bare Jedis%n", "bare Jedis EVALSHA", bare, 1.0);
    }
}
