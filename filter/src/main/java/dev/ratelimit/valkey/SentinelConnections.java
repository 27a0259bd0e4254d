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
 * stop again until its thread has ended or is asleep between attempts, where the flag it now
 * reads ends it when it wakes.
 */
final class SentinelConnections extends SentineledConnectionProvider {

    /** How long a close waits for a listener that has not run yet; a busy machine runs it well within. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(2);

    SentinelConnections(String master, JedisClientConfig client, GenericObjectPoolConfig<Connection> pool,
                        Set<HostAndPort> sentinels, JedisClientConfig sentinelClient) {
        super(master, client, pool, sentinels, sentinelClient);
    }

    @Override
    public void close() {
        super.close();
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        for (SentinelListener listener : sentinelListeners) {
            while (mayStillRun(listener) && System.nanoTime() < deadline) {
                listener.shutdown();
                try {
                    listener.join(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            listener.shutdown();
        }
    }

    /**
     * Whether the listener may not have read its stop yet: it is alive and neither waiting nor
     * asleep (a thread in its subscription's socket read shows as runnable, and the close ends
     * that read).
     */
    private static boolean mayStillRun(Thread listener) {
        Thread.State state = listener.getState();
        return state == Thread.State.NEW || state == Thread.State.RUNNABLE;
    }
}
