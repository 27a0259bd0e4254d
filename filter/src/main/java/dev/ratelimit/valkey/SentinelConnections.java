package dev.ratelimit.valkey;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.providers.SentineledConnectionProvider;

import java.time.Duration;
import java.util.Set;

/**
 * Jedis's Sentinel connections, whose close stops the threads that follow the sentinels even
 * when one has not run yet. Jedis 8's listener sets its running flag at the start of its
 * {@code run}: a close that comes between the thread's start and that first line (a client
 * built just as the application stops, on a busy machine) is undone, and the listener, not a
 * daemon, subscribes again and again for as long as the JVM lives. So each listener is told to
 * stop, and woken from a wait between attempts, until its thread has ended: a listener that has
 * run reads the flag at once (its subscription's socket is closed, its sleep interrupted).
 */
final class SentinelConnections extends SentineledConnectionProvider {

    /** The longest a close waits for its listeners; each normally ends within milliseconds of its first run. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);

    SentinelConnections(String master, JedisClientConfig client, GenericObjectPoolConfig<Connection> pool,
                        Set<HostAndPort> sentinels, JedisClientConfig sentinelClient) {
        super(master, client, pool, sentinels, sentinelClient);
    }

    @Override
    public void close() {
        super.close();
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        for (SentinelListener listener : sentinelListeners) {
            while (listener.isAlive() && System.nanoTime() < deadline) {
                listener.shutdown();
                listener.interrupt();
                try {
                    listener.join(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
