package dev.ratelimit.valkey;

import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Asks the primaries a client writes to whether they persist (see {@link Persistence}): the one
 * server of a standalone or Sentinel-managed client, every primary a cluster client knows. Each
 * question is one command bounded by the client's timeouts; a failure of any makes the answer
 * unknown, never an error.
 */
final class PersistenceQuestion {

    private PersistenceQuestion() {
    }

    /**
     * Asks.
     *
     * @param client   the limiter's client
     * @param endpoint how the client's server is named in the answer (standalone, Sentinel)
     * @return the answer
     */
    static Persistence ask(UnifiedJedis client, String endpoint) {
        List<String> volatileServers = new ArrayList<>();
        try {
            Map<String, ConnectionPool> nodes = client instanceof RedisClusterClient cluster ? cluster.getClusterNodes()
                    : client instanceof JedisCluster given ? given.getClusterNodes() : null;
            if (nodes != null) {
                for (Map.Entry<String, ConnectionPool> node : nodes.entrySet()) {
                    try (Connection connection = node.getValue().getResource()) {
                        // Not closed itself: closing the connection gives it back to its pool.
                        Jedis jedis = new Jedis(connection);
                        if ("master".equals(String.valueOf(roleOf(jedis))) && !persists(jedis.configGet("appendonly", "save"))) {
                            volatileServers.add(node.getKey());
                        }
                    }
                }
            } else if (!persists(client.configGet("appendonly", "save"))) {
                volatileServers.add(endpoint);
            }
        } catch (RuntimeException e) {
            return Persistence.unknown(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        }
        return volatileServers.isEmpty() ? Persistence.persistent() : Persistence.volatileOn(volatileServers);
    }

    /** A node's role, {@code master} or {@code slave}, from {@code ROLE}. */
    private static Object roleOf(Jedis jedis) {
        List<Object> role = jedis.role();
        Object first = role.isEmpty() ? null : role.get(0);
        return first instanceof byte[] bytes ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8) : first;
    }

    /** Whether {@code appendonly yes} or a {@code save} schedule is set. */
    private static boolean persists(Map<String, String> config) {
        String save = config.getOrDefault("save", "");
        return "yes".equalsIgnoreCase(config.getOrDefault("appendonly", "no")) || !save.isBlank();
    }
}
