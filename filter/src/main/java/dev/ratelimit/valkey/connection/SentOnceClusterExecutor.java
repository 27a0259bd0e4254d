package dev.ratelimit.valkey.connection;

import redis.clients.jedis.CommandObject;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.executors.ClusterCommandExecutor;
import redis.clients.jedis.providers.ClusterConnectionProvider;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The cluster client's executor, except that a command is never sent twice. Jedis retries a
 * command whose connection failed, a read timeout included; but a function call that timed out
 * may have run, and running it again would count its units twice (or hold a second lease no
 * one will release). Here a connection failure once the command was handed to its connection
 * ends the call: it fails as a timeout does on a single Valkey, and the limiter treats its reply
 * as lost. What happens before that is still retried: getting a connection (the command was not
 * sent) and following MOVED and ASK redirections (the node that answered did not run it).
 */
public final class SentOnceClusterExecutor extends ClusterCommandExecutor {

    /**
     * An executor.
     *
     * @param provider                the cluster's connections
     * @param maxAttempts             the most attempts of one command (connections and redirections)
     * @param maxTotalRetriesDuration the most time those attempts take together
     */
    public SentOnceClusterExecutor(ClusterConnectionProvider provider, int maxAttempts, Duration maxTotalRetriesDuration) {
        super(provider, maxAttempts, maxTotalRetriesDuration);
    }

    @Override
    protected <T> T execute(Connection connection, CommandObject<T> command) {
        try {
            return super.execute(connection, command);
        } catch (JedisConnectionException e) {
            // As Jedis does after a failed last attempt: the node may have moved or died.
            renewSlotCacheAvoiding(connection.getHostAndPort());
            throw new JedisClusterOperationException("the command may have run on " + connection.getHostAndPort()
                    + " and is not sent again", e, connection.getHostAndPort());
        }
    }

    /**
     * Asks one node other than the one that failed, picked at random, where the slots are.
     * Jedis's own renewal asks the seed node first: when the seed is the node that stalled, the
     * call would wait on it a second time, past its bound ({@code ClusterStalledSeedTest}). One
     * node, not each in turn: in an outage of the whole cluster every try would add a wait, and
     * the next failure picks another. Only a client that knows no other node asks Jedis's way.
     */
    private void renewSlotCacheAvoiding(HostAndPort failed) {
        List<ConnectionPool> others = new ArrayList<>();
        provider.getNodes().forEach((node, pool) -> {
            if (!node.equals(failed.toString())) {
                others.add(pool);
            }
        });
        if (others.isEmpty()) {
            provider.renewSlotCache();
            return;
        }
        try (Connection other = others.get(ThreadLocalRandom.current().nextInt(others.size())).getResource()) {
            provider.renewSlotCache(other);
        } catch (JedisException e) {
            // That node is out of reach too; the next failure asks another.
        }
    }
}
