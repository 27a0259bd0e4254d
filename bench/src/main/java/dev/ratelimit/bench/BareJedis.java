package dev.ratelimit.bench;

import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.util.JedisURIHelper;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The floor of any Valkey limiter on Jedis: a pooled client calling the source article's minimal
 * token-bucket script with {@code EVALSHA}, the time passed from the client, nothing else.
 */
final class BareJedis implements Contender {

    private final RedisClient client;
    private final String sha;
    private final String capacity;
    private final String perSecond;

    BareJedis(String url, long capacity, java.time.Duration refill) {
        URI uri = URI.create(url);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        pool.setJmxEnabled(false);
        this.client = RedisClient.builder().hostAndPort(JedisURIHelper.getHostAndPort(uri))
                .clientConfig(DefaultJedisClientConfig.builder().timeoutMillis(5_000).build())
                .poolConfig(pool).build();
        this.sha = client.scriptLoad(script());
        this.capacity = Long.toString(capacity);
        this.perSecond = Double.toString(capacity * 1000.0 / refill.toMillis());
    }

    static String script() {
        try (InputStream in = BareJedis.class.getResourceAsStream("minimal-token-bucket.lua")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String name() {
        return "bare Jedis EVALSHA minimal";
    }

    @Override
    public boolean tryAcquire(String key) {
        Object reply = client.evalsha(sha, List.of("bench:bare:" + key),
                List.of(capacity, perSecond, Long.toString(System.currentTimeMillis()), "1"));
        return reply instanceof List<?> values && Long.valueOf(1).equals(values.get(0));
    }

    @Override
    public void close() {
        client.close();
    }
}
