package dev.ratelimit.valkey;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisURIHelper;

import javax.net.ssl.SSLParameters;
import java.net.URI;
import java.util.Set;

/** Builds the Jedis client for {@link ValkeySettings}: a pooled standalone or cluster client. */
final class ValkeyClients {

    private ValkeyClients() {
    }

    /**
     * A pooled client whose every wait (connect, reply, borrow) is bounded by the settings.
     * No connection is opened here: a Valkey that is down at start-up is found on first use.
     */
    static UnifiedJedis create(ValkeySettings settings) {
        URI uri = URI.create(settings.url());
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis((int) settings.connectTimeout().toMillis())
                .socketTimeoutMillis((int) settings.socketTimeout().toMillis())
                .ssl(JedisURIHelper.isRedisSSLScheme(uri))
                // Every command on a new connection is one more wait a paused server can impose.
                // Jedis sends HELLO for any protocol it is given, RESP2 included, and negotiates
                // one when given none: the server's default (RESP2) needs no HELLO at all.
                // CLIENT SETINFO is skipped too.
                .serverDefaultProtocol()
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        String user = JedisURIHelper.getUser(uri);
        String password = JedisURIHelper.getPassword(uri);
        if (user != null) {
            config.user(user);
        }
        if (password != null) {
            config.password(password);
        }
        if (JedisURIHelper.isRedisSSLScheme(uri)) {
            // Jedis verifies no host name unless told: without this any certificate from a
            // trusted CA, issued to any name, would do.
            SSLParameters parameters = new SSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            config.sslParameters(parameters);
            settings.tlsCaFile().ifPresent(file -> config.sslSocketFactory(TrustedCertificates.socketFactory(file)));
        }
        if (JedisURIHelper.hasDbIndex(uri)) {
            config.database(JedisURIHelper.getDBIndex(uri));
        }

        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(settings.poolMaxTotal());
        pool.setMaxIdle(settings.poolMaxIdle());
        pool.setMaxWait(settings.poolMaxWait());
        pool.setBlockWhenExhausted(true);
        // Jedis's pool defaults to a JMX registration per pool, which clashes between instances.
        pool.setJmxEnabled(false);

        if (settings.cluster()) {
            return RedisClusterClient.builder()
                    .nodes(Set.of(JedisURIHelper.getHostAndPort(uri)))
                    .clientConfig(config.build())
                    .poolConfig(pool)
                    // Redirections and reconnects are retried, but never past the bounds of one call.
                    .maxAttempts(2)
                    .maxTotalRetriesDuration(settings.connectTimeout().plus(settings.socketTimeout()))
                    .build();
        }
        return RedisClient.builder()
                .hostAndPort(JedisURIHelper.getHostAndPort(uri))
                .clientConfig(config.build())
                .poolConfig(pool)
                .build();
    }
}
