package dev.ratelimit.it;

import redis.clients.jedis.CommandObject;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.providers.PooledConnectionProvider;
import redis.clients.jedis.util.JedisURIHelper;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What Valkey itself cannot cause, put into the pooled connections of real clients of a real
 * Valkey: an {@link Error} thrown by the client (an {@link OutOfMemoryError} while reading
 * replies, say), or a command held back until the test lets it go. Everything else is the real
 * client talking to the real server.
 */
final class Faults {

    /** Thrown by the next commands sent on their own, one each, instead of sending them. */
    private final Queue<Throwable> callFaults = new ConcurrentLinkedQueue<>();
    /** Thrown by the next pipeline, once, after its commands were written and before any reply is read. */
    private final AtomicReference<Throwable> pipelineFault = new AtomicReference<>();
    /** Lets the held command go; taken by the command it holds. */
    private final AtomicReference<CountDownLatch> holdNext = new AtomicReference<>();
    /** Counted down once the held command waits. */
    private volatile CountDownLatch held = new CountDownLatch(1);

    /**
     * A {@link RedisClient}, as the limiter builds for a URL, whose connections suffer these faults.
     *
     * @param url the server
     * @return a new client; the caller closes it
     */
    RedisClient redisClient(String url) {
        HostAndPort address = JedisURIHelper.getHostAndPort(URI.create(url));
        return RedisClient.builder().hostAndPort(address).clientConfig(ValkeyServer.plainConfig(2_000))
                .connectionProvider(provider(address)).build();
    }

    /**
     * A client of no kind the limiter knows (neither {@code RedisClient} nor
     * {@code RedisSentinelClient}), whose connections suffer these faults.
     *
     * @param url the server
     * @return a new client; the caller closes it
     */
    UnifiedJedis otherClient(String url) {
        return new UnifiedJedis(provider(JedisURIHelper.getHostAndPort(URI.create(url))), (RedisProtocol) null) {
        };
    }

    private PooledConnectionProvider provider(HostAndPort address) {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(32);
        pool.setMaxWait(Duration.ofMillis(20));
        pool.setJmxEnabled(false);
        return new PooledConnectionProvider(new PooledConnections(() -> new FaultyConnection(address, ValkeyServer.plainConfig(2_000))), pool);
    }

    /**
     * The next command sent on its own throws this instead of going out.
     *
     * @param fault what it throws
     */
    void failNextCall(Throwable fault) {
        callFaults.add(fault);
    }

    /**
     * The next pipeline throws this, once, after its commands were written: their replies stay
     * unread on the connection.
     *
     * @param fault what it throws
     */
    void failNextPipeline(Throwable fault) {
        pipelineFault.set(fault);
    }

    /** Forgets every fault not thrown yet. */
    void clear() {
        callFaults.clear();
        pipelineFault.set(null);
    }

    /**
     * The next command sent on its own waits, before it goes out, until the returned latch is
     * counted down.
     *
     * @return the latch that lets it go
     */
    CountDownLatch holdNextCall() {
        CountDownLatch release = new CountDownLatch(1);
        held = new CountDownLatch(1);
        holdNext.set(release);
        return release;
    }

    /**
     * Waits until the command of {@link #holdNextCall()} is held.
     *
     * @throws InterruptedException if interrupted
     */
    void awaitHeld() throws InterruptedException {
        if (!held.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no command came to be held within 10 s");
        }
    }

    private void beforeCommand() {
        CountDownLatch release = holdNext.getAndSet(null);
        if (release != null) {
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Throwable fault = callFaults.poll();
        if (fault != null) {
            throw unchecked(fault);
        }
    }

    private void beforeReplies() {
        Throwable fault = pipelineFault.getAndSet(null);
        if (fault != null) {
            throw unchecked(fault);
        }
    }

    private static RuntimeException unchecked(Throwable fault) {
        if (fault instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (fault instanceof Error error) {
            throw error;
        }
        throw new IllegalArgumentException("fault " + fault + " is neither a RuntimeException nor an Error");
    }

    /** A real connection, but for the faults. */
    private final class FaultyConnection extends Connection {
        FaultyConnection(HostAndPort address, JedisClientConfig config) {
            super(address, config);
        }

        @Override
        public <T> T executeCommand(CommandObject<T> command) {
            beforeCommand();
            return super.executeCommand(command);
        }

        /** What a pipeline reads its replies with, after writing its commands. */
        @Override
        public List<Object> getMany(int count) {
            flush();
            beforeReplies();
            return super.getMany(count);
        }
    }
}
