package dev.ratelimit.valkey.connection;

import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.Pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

/**
 * Function calls sent in one pipeline, all of it (the wait for a pooled connection, the write,
 * the reads) ending by a deadline: the thread that sends a pipeline has usually queued before,
 * and with the client's own timeouts its wait would be its time in the queue plus a whole
 * call's bound.
 *
 * <p>On the clients {@code ValkeyClients} builds (standalone and Sentinel) the connection is
 * borrowed from the client's pool for no longer than the pool's wait and the time left, and
 * its reads time out at the deadline; it goes back to the pool with its own timeout. On any
 * other client given to the builder the pipeline is the client's, its waits the client's
 * timeouts.
 */
final class DeadlinePipelines {

    private final UnifiedJedis client;
    /** The pool of the primary, looked up per pipeline (a Sentinel failover changes it); null: none reachable. */
    private final Supplier<Pool<Connection>> pool;

    DeadlinePipelines(UnifiedJedis client) {
        this.client = client;
        this.pool = poolOf(client);
    }

    private static Supplier<Pool<Connection>> poolOf(UnifiedJedis client) {
        if (client instanceof RedisClient standalone) {
            Pool<Connection> pool = standalone.getPool();
            return () -> pool;
        }
        if (client instanceof RedisSentinelClient sentinel) {
            return () -> {
                Iterator<Pool<Connection>> primary = sentinel.getPrimaryNodesConnectionMap().values().iterator();
                return primary.hasNext() ? primary.next() : null;
            };
        }
        return null;
    }

    /** One {@code FCALL function keys args}. */
    record FunctionCall(String function, List<String> keys, List<String> args) {
    }

    /**
     * Sends the calls in one pipeline and reads every reply.
     *
     * @param calls         the calls, in order
     * @param deadlineNanos the {@link System#nanoTime()} by which it is all over
     * @return each call's response, in order; {@link Response#get()} throws that call's own error
     * @throws RuntimeException the connection's failure, for every call; a
     *                          {@link PipelinedCalls.PipelineWaitException} when the deadline came
     *                          before the calls could be sent
     */
    List<Response<Object>> send(List<FunctionCall> calls, long deadlineNanos) {
        Pool<Connection> primary = pool == null ? null : pool.get();
        if (primary == null) {
            try (AbstractPipeline pipeline = client.pipelined()) {
                return sendOn(pipeline, calls);
            }
        }
        Connection connection = borrow(primary, deadlineNanos);
        int ownTimeout = connection.getSoTimeout();
        try {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw new PipelinedCalls.PipelineWaitException("no time was left to send the pipeline once it had "
                        + "a connection");
            }
            // At least 1 ms: 0 would mean no timeout at all.
            long cut = Math.max(1, left / 1_000_000);
            if (ownTimeout <= 0 || cut < ownTimeout) {
                connection.setSoTimeout((int) cut);
            }
            return sendOn(connection, calls);
        } finally {
            giveBack(primary, connection, ownTimeout);
        }
    }

    private static List<Response<Object>> sendOn(Connection connection, List<FunctionCall> calls) {
        try {
            return sendOn(new Pipeline(connection, false), calls);
        } catch (Throwable e) {
            // Replies may be left unread (an Error between write and read, say): nobody may
            // read this connection again.
            connection.setBroken();
            throw e;
        }
    }

    private static List<Response<Object>> sendOn(AbstractPipeline pipeline, List<FunctionCall> calls) {
        List<Response<Object>> responses = new ArrayList<>(calls.size());
        for (FunctionCall call : calls) {
            responses.add(pipeline.fcall(call.function(), call.keys(), call.args()));
        }
        pipeline.sync();
        return responses;
    }

    /** A connection within the pool's wait and the time left, as {@code Pool.getResource} would fail. */
    private static Connection borrow(Pool<Connection> pool, long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            throw new PipelinedCalls.PipelineWaitException("no time was left to send the pipeline");
        }
        Duration poolWait = pool.getMaxWaitDuration();
        long wait = poolWait.isNegative() ? left : Math.min(poolWait.toNanos(), left);
        try {
            return pool.borrowObject(Duration.ofNanos(wait));
        } catch (JedisException e) {
            throw e;
        } catch (Exception e) {
            throw new JedisException("Could not get a resource from the pool", e);
        }
    }

    private static void giveBack(Pool<Connection> pool, Connection connection, int ownTimeout) {
        if (!connection.isBroken() && connection.getSoTimeout() != ownTimeout) {
            try {
                connection.setSoTimeout(ownTimeout);
            } catch (JedisConnectionException e) {
                // Marked broken: the pool closes it.
            }
        }
        if (connection.isBroken()) {
            pool.returnBrokenResource(connection);
        } else {
            pool.returnResource(connection);
        }
    }
}
