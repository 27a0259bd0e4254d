package dev.ratelimit.it;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.util.JedisURIHelper;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** A server's stall ({@link ValkeyServer#stall}) started in the background, known to have begun. */
final class Stalls {

    /** A PING unanswered this long: the server sleeps (a busy machine answers one far sooner). */
    private static final int UNANSWERED_MS = 300;

    private Stalls() {
    }

    /**
     * Stalls the server for {@code duration} from another thread, and returns once it sleeps: when
     * a PING is not answered within 300 ms. So the stall began at most that long (and the time a
     * busy machine takes to notice) before this returns, and never after.
     *
     * @return the stall, done when the server answers again
     */
    static CompletableFuture<Void> begin(ValkeyServer server, Duration duration) throws InterruptedException {
        CompletableFuture<Void> stall = CompletableFuture.runAsync(() -> server.stall(duration));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try (Jedis jedis = new Jedis(JedisURIHelper.getHostAndPort(URI.create(server.url())),
                    ValkeyServer.plainConfig(UNANSWERED_MS))) {
                jedis.ping();
            } catch (JedisConnectionException e) {
                return stall;
            }
            if (stall.isDone() || System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the server did not stall: " + (stall.isDone() ? "the stall ended"
                        : "it answered for 10 s"));
            }
            Thread.sleep(10);
        }
    }
}
