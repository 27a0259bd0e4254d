package dev.ratelimit.valkey;

import dev.ratelimit.valkey.connection.SentOnceClusterExecutor;
import dev.ratelimit.valkey.connection.SentinelConnections;
import dev.ratelimit.valkey.connection.TrustedCertificates;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.providers.ClusterConnectionProvider;
import redis.clients.jedis.util.JedisURIHelper;

import java.net.URI;
import java.time.Duration;
import java.util.Set;
import javax.net.ssl.SSLParameters;

/** Builds the Jedis client for {@link ValkeySettings}: a pooled standalone, Sentinel or cluster client. */
final class ValkeyClients {

    private ValkeyClients() {
    }

    /**
     * A pooled client whose every wait (connect, reply, borrow) is bounded by the settings.
     * A standalone client opens no connection here: a Valkey that is down at start-up is found
     * on first use. Sentinel and cluster clients must ask where the primaries are, and fail when
     * nobody answers.
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
        // Sentinels take the same timeouts, TLS and credentials, but have no databases to select.
        JedisClientConfig sentinelConfig = config.build();
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

        if (settings.sentinel().isPresent()) {
            // Asks the sentinels for the primary now (it fails when none answers), then follows
            // their +switch-master announcements: a promoted replica is used without a restart.
            JedisClientConfig clientConfig = config.build();
            String master = settings.sentinel().get().master();
            Set<HostAndPort> sentinels = settings.sentinel().get().addresses();
            return RedisSentinelClient.builder()
                    .masterName(master)
                    .sentinels(sentinels)
                    .sentinelClientConfig(sentinelConfig)
                    .clientConfig(clientConfig)
                    .connectionProvider(new SentinelConnections(master, clientConfig, pool, sentinels, sentinelConfig))
                    .build();
        }
        if (settings.cluster()) {
            Set<HostAndPort> seed = Set.of(JedisURIHelper.getHostAndPort(uri));
            JedisClientConfig clientConfig = config.build();
            ClusterConnectionProvider connections = new ClusterConnectionProvider(seed, clientConfig, pool);
            Duration bound = settings.connectTimeout().plus(settings.socketTimeout());
            return RedisClusterClient.builder()
                    .nodes(seed)
                    .clientConfig(clientConfig)
                    .connectionProvider(connections)
                    // A redirection or a failed connect is tried again within the bounds of one
                    // call; a command once sent never is (SentOnceClusterExecutor).
                    .commandExecutor(new SentOnceClusterExecutor(connections, 2, bound))
                    .build();
        }
        return RedisClient.builder()
                .hostAndPort(JedisURIHelper.getHostAndPort(uri))
                .clientConfig(config.build())
                .poolConfig(pool)
                .build();
    }
}
