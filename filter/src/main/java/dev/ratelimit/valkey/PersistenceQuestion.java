package dev.ratelimit.valkey;

import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Asks the primaries a client writes to whether they persist (see {@link Persistence}): the one
 * server of a standalone or Sentinel-managed client, every primary of a cluster (from
 * {@code CLUSTER SLOTS}, which the client needs to be allowed anyway). Each question is one
 * command bounded by the client's timeouts. A primary that cannot be asked makes the answer
 * unknown for it, never an error, and does not hide what the others answered.
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
        Map<String, ConnectionPool> nodes = client instanceof RedisClusterClient cluster ? cluster.getClusterNodes()
                : client instanceof JedisCluster given ? given.getClusterNodes() : null;
        try {
            if (nodes == null) {
                return persists(client.configGet("appendonly", "save")) ? Persistence.persistent()
                        : Persistence.volatileOn(List.of(endpoint));
            }
            return askEach(nodes, primaries(nodes));
        } catch (RuntimeException e) {
            return Persistence.unknown(reason(e));
        }
    }

    /** Asks each primary in turn; one that fails is named in the reason, the others still count. */
    private static Persistence askEach(Map<String, ConnectionPool> nodes, List<String> primaries) {
        List<String> volatileServers = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (String primary : primaries) {
            ConnectionPool pool = nodes.get(primary);
            if (pool == null) {
                failed.add(primary + ": no connection to it");
                continue;
            }
            try (Connection connection = pool.getResource()) {
                // Not closed itself: closing the connection gives it back to its pool.
                if (!persists(new Jedis(connection).configGet("appendonly", "save"))) {
                    volatileServers.add(primary);
                }
            } catch (RuntimeException e) {
                failed.add(primary + ": " + reason(e));
            }
        }
        return new Persistence(volatileServers, failed.isEmpty() ? null : String.join("; ", failed));
    }

    /** The primaries, {@code host:port}, from the first node that answers {@code CLUSTER SLOTS}. */
    private static List<String> primaries(Map<String, ConnectionPool> nodes) {
        RuntimeException last = new IllegalStateException("no cluster node known");
        for (ConnectionPool pool : nodes.values()) {
            try (Connection connection = pool.getResource()) {
                Set<String> primaries = new LinkedHashSet<>();
                for (Object range : new Jedis(connection).clusterSlots()) {
                    // [start, end, [host, port, id], replicas...]: the first node serves the range.
                    List<?> serving = (List<?>) ((List<?>) range).get(2);
                    primaries.add(text(serving.get(0)) + ":" + serving.get(1));
                }
                return List.copyOf(primaries);
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw last;
    }

    private static String text(Object reply) {
        return reply instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(reply);
    }

    private static String reason(RuntimeException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** Whether {@code appendonly yes} or a {@code save} schedule is set. */
    private static boolean persists(Map<String, String> config) {
        String save = config.getOrDefault("save", "");
        return "yes".equalsIgnoreCase(config.getOrDefault("appendonly", "no")) || !save.isBlank();
    }
}
