package dev.ratelimit.valkey.connection;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.providers.SentineledConnectionProvider;
import redis.clients.jedis.util.Pool;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * Jedis's Sentinel connections, whose close stops the threads that follow the sentinels even
 * when one has not run yet. Jedis 8's listener sets its running flag at the start of its
 * {@code run}: a close that comes between the thread's start and that first line (a client
 * built just as the application stops, on a busy machine) is undone, and the listener, not a
 * daemon, subscribes again and again for as long as the JVM lives; one in the middle of a
 * connect subscribes when the connect ends, whatever the flag. So each listener is told to stop,
 * and woken from a wait between attempts, until its thread has ended: a listener that has run
 * reads the flag at once (its subscription's socket is closed, its sleep interrupted). The
 * close waits for that a moment; a listener still connecting then is seen to its end by a
 * daemon thread, for as long as its connect and first reply can take. Once they have ended, the
 * pool of the primary they last announced is closed too.
 */
public final class SentinelConnections extends SentineledConnectionProvider {

    /** How long a close waits for its listeners; each normally ends within milliseconds of its first run. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(1);

    private final Duration stopWait;

    /**
     * Connections to the primary the sentinels name, followed as they change.
     *
     * @param master         the primary's name
     * @param client         how to connect to the primary
     * @param pool           the primary's pool
     * @param sentinels      the sentinels
     * @param sentinelClient how to connect to the sentinels
     */
    public SentinelConnections(String master, JedisClientConfig client, GenericObjectPoolConfig<Connection> pool,
                        Set<HostAndPort> sentinels, JedisClientConfig sentinelClient) {
        super(master, client, pool, sentinels, sentinelClient);
        // A listener still connecting ends after its connect and a reply at most, then a margin.
        this.stopWait = Duration.ofMillis(sentinelClient.getConnectionTimeoutMillis())
                .plusMillis(sentinelClient.getSocketTimeoutMillis()).plusSeconds(5);
    }

    @Override
    public void close() {
        super.close();
        if (stop(sentinelListeners, CLOSE_WAIT)) {
            closePool();
        } else {
            List<SentinelListener> left = sentinelListeners.stream().filter(Thread::isAlive).toList();
            Thread stopper = new Thread(() -> {
                stop(left, stopWait);
                closePool();
            }, "ratelimit-sentinel-listener-stop");
            stopper.setDaemon(true);
            stopper.start();
        }
    }

    /**
     * Closes the pool of the primary the listeners last announced: one handling a failover as
     * the close came built it after the close had closed the one before.
     */
    private void closePool() {
        getConnectionMap().values().forEach(Pool::close);
    }

    /** Stops the listeners until their threads have ended or the wait is over; whether they all ended. */
    private static boolean stop(Collection<SentinelListener> listeners, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        for (SentinelListener listener : listeners) {
            while (listener.isAlive() && System.nanoTime() < deadline) {
                listener.shutdown();
                listener.interrupt();
                try {
                    listener.join(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return listeners.stream().noneMatch(Thread::isAlive);
    }
}
