package dev.ratelimit.it;

import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.providers.PooledConnectionProvider;
import redis.clients.jedis.util.JedisURIHelper;

import java.net.URI;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A pooled client of a real Valkey into which a test puts what Valkey itself cannot cause: an
 * {@link Error} thrown by the client (an {@link OutOfMemoryError} while reading a reply, say),
 * or a function call held on the wire until the test lets it go. Everything else is the real
 * client talking to the real server.
 */
final class FaultyClient extends UnifiedJedis {

    /** Thrown by the next function calls sent on their own, one each, instead of sending them. */
    private final Queue<Throwable> callFaults = new ConcurrentLinkedQueue<>();
    /** Thrown by the next pipeline's sync, once, after its calls were written. */
    private final AtomicReference<Throwable> pipelineFault = new AtomicReference<>();
    /** Lets the held call go; taken by the call it holds. */
    private final AtomicReference<CountDownLatch> holdNext = new AtomicReference<>();
    /** Counted down once the held call waits. */
    private volatile CountDownLatch held = new CountDownLatch(1);

    FaultyClient(String url) {
        this(new PooledConnectionProvider(JedisURIHelper.getHostAndPort(URI.create(url)),
                ValkeyServer.plainConfig(2_000)));
    }

    private FaultyClient(PooledConnectionProvider provider) {
        super(provider, (RedisProtocol) null);
    }

    /**
     * The next function call sent on its own throws this instead of going out.
     *
     * @param fault what it throws
     */
    void failNextCall(Throwable fault) {
        callFaults.add(fault);
    }

    /**
     * The next pipeline's sync throws this, once, after its calls were written: its replies
     * stay unread until the pipeline is closed.
     *
     * @param fault what it throws
     */
    void failNextPipeline(Throwable fault) {
        pipelineFault.set(fault);
    }

    /** Forgets every fault not thrown yet. */
    void clearFaults() {
        callFaults.clear();
        pipelineFault.set(null);
    }

    /**
     * The next function call sent on its own waits, before it goes out, until the returned
     * latch is counted down.
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
     * Waits until the call of {@link #holdNextCall()} is held.
     *
     * @throws InterruptedException if interrupted
     */
    void awaitHeld() throws InterruptedException {
        if (!held.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no function call came to be held within 10 s");
        }
    }

    @Override
    public Object fcall(String name, List<String> keys, List<String> args) {
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
            throw sneaky(fault);
        }
        return super.fcall(name, keys, args);
    }

    @Override
    public AbstractPipeline pipelined() {
        return new Pipeline(provider.getConnection(), true) {
            @Override
            public void sync() {
                Throwable fault = pipelineFault.getAndSet(null);
                if (fault != null) {
                    throw sneaky(fault);
                }
                super.sync();
            }
        };
    }

    private static RuntimeException sneaky(Throwable fault) {
        if (fault instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (fault instanceof Error error) {
            throw error;
        }
        throw new IllegalArgumentException("fault " + fault + " is neither a RuntimeException nor an Error");
    }
}
