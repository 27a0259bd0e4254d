package dev.ratelimit.bench;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.jedis.Bucket4jJedis;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisURIHelper;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;

/** The anchor: Bucket4j's compare-and-swap proxy manager on a Jedis client with the same pool. */
final class Bucket4jLimiter implements Contender {

    private final UnifiedJedis client;
    private final ProxyManager<byte[]> buckets;
    private final BucketConfiguration configuration;
    private final Map<String, io.github.bucket4j.distributed.BucketProxy> proxies = new ConcurrentHashMap<>();

    Bucket4jLimiter(String url, long capacity, Duration refill) {
        URI uri = URI.create(url);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        pool.setJmxEnabled(false);
        this.client = RedisClient.builder().hostAndPort(JedisURIHelper.getHostAndPort(uri))
                .clientConfig(DefaultJedisClientConfig.builder().timeoutMillis(5_000).build())
                .poolConfig(pool).build();
        this.buckets = Bucket4jJedis.casBasedBuilder(client)
                .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(refill))
                .build();
        this.configuration = BucketConfiguration.builder()
                .addLimit(limit -> limit.capacity(capacity).refillGreedy(capacity, refill))
                .build();
    }

    @Override
    public String name() {
        return "bucket4j (jedis, cas)";
    }

    @Override
    public boolean tryAcquire(String key) {
        return proxies.computeIfAbsent(key, k -> buckets.builder()
                .build(("bench:b4j:" + k).getBytes(StandardCharsets.UTF_8), () -> configuration))
                .tryConsume(1);
    }

    @Override
    public void close() {
        client.close();
    }
}
