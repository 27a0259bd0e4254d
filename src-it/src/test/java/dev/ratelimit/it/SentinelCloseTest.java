package dev.ratelimit.it;

import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Sentinel client closed as soon as it is built leaves none of the threads that follow the
 * sentinels: Jedis starts one per sentinel when the client is built, and one that had not run
 * when the close came used to subscribe for ever (not a daemon: it also kept the JVM alive).
 * Threads spinning beside the builds make it likely that a listener has not run yet.
 */
@ExtendWith(ValkeySentinelsExtension.class)
class SentinelCloseTest {

    private static final int CLIENTS = 40;

    private final ValkeySentinels topology;

    SentinelCloseTest(ValkeySentinels topology) {
        this.topology = topology;
    }

    @Test
    void aClientClosedAsSoonAsBuiltLeavesNoListener() throws Exception {
        ValkeySettings settings = ValkeySettings.of("redis://ignored:1")
                .withSentinel(ValkeySentinels.MASTER, topology.sentinelNodes());
        Spinners spinners = Spinners.start(4);
        try {
            for (int i = 0; i < CLIENTS; i++) {
                ValkeyRateLimiter.builder().settings(settings).build().close();
            }
        } finally {
            spinners.close();
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!listeners().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(listeners()).as("listener threads %s after %s clients were closed", listeners().size(), CLIENTS)
                .isEmpty();
    }

    private static List<String> listeners() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.contains("SentinelListener")).toList();
    }
}
