package dev.ratelimit.it;

import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.exceptions.JedisDataException;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Sentinel client closed just as the sentinels announce a failover (an undeploy during a
 * failover): the client's listener, handling the announcement, builds a pool for the new primary.
 * After the close, every pool of the client is closed (an open one keeps its evictor, a thread
 * of the JVM, scheduled), no listener thread is left, and the close is bounded.
 */
@ExtendWith(ValkeySentinelsExtension.class)
class SentinelFailoverCloseTest {

    private static final int ROUNDS = 6;

    private final ValkeySentinels topology;

    SentinelFailoverCloseTest(ValkeySentinels topology) {
        this.topology = topology;
    }

    @Test
    void aClientClosedAsTheFailoverIsAnnouncedLeavesNoPoolOpenAndNoListener() throws Exception {
        List<String> nodes = topology.sentinelNodes();
        ValkeySettings settings = ValkeySettings.of("redis://ignored:1")
                .withSentinel(ValkeySentinels.MASTER, nodes);
        Spinners spinners = Spinners.start(3);
        List<String> openPools = new ArrayList<>();
        List<Long> closes = new ArrayList<>();
        List<Thread> earlier = SentinelCloseEdgesTest.listenerThreads();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(settings).build();
                Object provider = field(field(field(limiter, "client"), "client"), "provider");
                AtomicLong closeMillis = new AtomicLong(-1);
                CountDownLatch closed = new CountDownLatch(1);
                AtomicReference<Jedis> observer = new AtomicReference<>();
                Thread watcher = new Thread(() -> {
                    // The sentinel asked for the failover announces it first, to the client's listener on it too.
                    try (Jedis jedis = new Jedis("127.0.0.1", SentinelCloseEdgesTest.port(nodes.get(1)))) {
                        observer.set(jedis);
                        jedis.subscribe(new JedisPubSub() {
                            @Override
                            public void onMessage(String channel, String message) {
                                long started = System.nanoTime();
                                limiter.close();
                                closeMillis.set((System.nanoTime() - started) / 1_000_000);
                                closed.countDown();
                                unsubscribe();
                            }
                        }, "+switch-master");
                    } catch (RuntimeException e) {
                        // the observer closed at the end of a round that timed out
                    }
                }, "switch-master-watcher");
                watcher.start();
                Thread.sleep(200); // subscribed
                failover(nodes);
                boolean announced = closed.await(60, TimeUnit.SECONDS);
                if (!announced) {
                    limiter.close();
                    observer.get().close();
                }
                assertThat(announced).as("round %s: a +switch-master within 60 s", round).isTrue();
                closes.add(closeMillis.get());
                Object pool = field(provider, "pool");
                boolean poolClosed = (boolean) pool.getClass().getMethod("isClosed").invoke(pool);
                Thread.sleep(300); // a listener still handling the announcement finishes
                Object after = field(provider, "pool");
                boolean afterClosed = (boolean) after.getClass().getMethod("isClosed").invoke(after);
                if (!poolClosed || !afterClosed) {
                    openPools.add("round " + round);
                    after.getClass().getMethod("close").invoke(after); // not to leak into the next rounds
                }
                watcher.join(5_000);
            }
        } finally {
            spinners.close();
        }
        System.out.println("SentinelFailoverCloseTest closes (ms): " + closes + ", pools left open: " + openPools);
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<Thread> left = SentinelCloseEdgesTest.listenerThreads();
        left.removeAll(earlier);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
            left = SentinelCloseEdgesTest.listenerThreads();
            left.removeAll(earlier);
        }
        assertThat(left.stream().map(Thread::getName).toList()).as("listener threads after %s closes", ROUNDS).isEmpty();
        assertThat(openPools).as("rounds whose client kept a pool open after its close (closes took %s ms)", closes)
                .isEmpty();
        assertThat(closes).as("ms each close took").allSatisfy(millis -> assertThat(millis).isBetween(0L, 3_000L));
    }

    /** Asks a sentinel for a failover, again while the last one settles (no replica in sync yet). */
    private static void failover(List<String> nodes) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try (Jedis jedis = new Jedis("127.0.0.1", SentinelCloseEdgesTest.port(nodes.get(1)))) {
                jedis.sentinelFailover(ValkeySentinels.MASTER);
                return;
            } catch (JedisDataException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    private static Object field(Object target, String name) throws ReflectiveOperationException {
        for (Class<?> type = target.getClass(); type != null; type = type.getSuperclass()) {
            try {
                Field field = type.getDeclaredField(name);
                field.setAccessible(true);
                return field.get(target);
            } catch (NoSuchFieldException e) {
                // a superclass declares it
            }
        }
        throw new NoSuchFieldException(name + " in " + target.getClass());
    }
}
