package dev.ratelimit.it;

import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Closing a Sentinel client (the filter's destroy) under conditions the plain close test does not
 * make: a sentinel slow to accept the listener's connection, one sentinel down, busy CPUs, a
 * deploy and undeploy loop. After each, no {@code SentinelListener} thread, no subscribed
 * connection on the sentinels, no MBean, and each close bounded.
 */
@ExtendWith(ValkeySentinelsExtension.class)
class SentinelCloseEdgesTest {

    private final ValkeySentinels topology;

    SentinelCloseEdgesTest(ValkeySentinels topology) {
        this.topology = topology;
    }

    /**
     * A sentinel whose port takes the listener's connection only after the close gave up waiting
     * for it (a connect-timeout of seconds, a sentinel host slow to accept): the listener is past
     * its running flag, has no connection yet for the close to end, and once connected
     * subscribes.
     */
    @Tag("wall-clock") // bounds a latency: keep such tests few, with generous bounds
    @Test
    void aSentinelThatAcceptsTheListenerOnlyAfterTheCloseLeavesNoListener() throws Exception {
        String first = topology.sentinelNodes().get(0);
        int second = port(topology.sentinelNodes().get(1));
        int subscribedBefore = subscribed(second);
        try (StalledPort stalled = new StalledPort(second)) {
            ValkeySettings settings = ValkeySettings.of("redis://ignored:1")
                    .withConnectTimeout(Duration.ofSeconds(8))
                    .withSentinel(ValkeySentinels.MASTER, List.of(first, "127.0.0.1:" + stalled.port()));
            ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(settings).build();
            Thread.sleep(300); // the listener on the stalled port is in its connect
            long started = System.nanoTime();
            limiter.close();
            long closeMillis = (System.nanoTime() - started) / 1_000_000;
            System.out.println("SentinelCloseEdgesTest stalled sentinel: close " + closeMillis + " ms");
            stalled.open();
            // The kernel retries the connect (1 s, 3 s, 7 s), within the 8 s timeout; then the
            // listener must end. Up to 20 s for a busy machine.
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            Thread.sleep(9_000);
            while ((!listeners("127.0.0.1:" + stalled.port()).isEmpty() || subscribed(second) != subscribedBefore)
                    && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(closeMillis).as("ms the close took").isLessThan(3_000);
            softly.assertThat(listeners("127.0.0.1:" + stalled.port()))
                    .as("listener threads of the stalled sentinel 9 to 20 s after a close that took %s ms",
                            closeMillis).isEmpty();
            softly.assertThat(subscribed(second)).as("subscribed connections on the sentinel behind the stalled port")
                    .isEqualTo(subscribedBefore);
            softly.assertAll();
        }
    }

    /**
     * The filter deployed and undeployed again and again, one of its three sentinels down and one
     * slow to answer, threads spinning on both cores: nothing is left after the undeploys and each took bounded
     * time.
     */
    @Test
    void deployUndeployLoopWithOneSentinelDownAndBusyCpusLeavesNothing() throws Exception {
        int down;
        try (ServerSocket unused = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            down = unused.getLocalPort();
        }
        List<String> nodes = topology.sentinelNodes();
        // The second sentinel slow: each connection relayed only after 1 s.
        Gate slow = new Gate(port(nodes.get(1)));
        slow.openHolding(1_000);
        String sentinels = nodes.get(0) + ",127.0.0.1:" + slow.port() + ",127.0.0.1:" + down;
        int[] before = {subscribed(port(nodes.get(0))), subscribed(port(nodes.get(1)))};
        List<Thread> earlier = listenerThreads();
        Spinners spinners = Spinners.start(4);
        long worst = 0;
        List<Long> closes = new ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) {
                Map<String, String> settings = JettyApp.settings("redis://sentinel-managed",
                        "ratelimit.valkey.sentinel.master", ValkeySentinels.MASTER,
                        "ratelimit.valkey.sentinel.nodes", sentinels,
                        "ratelimit.valkey.connect-timeout", "200ms",
                        "ratelimit.rules", "loop", "ratelimit.rule.loop.limit", "100",
                        "ratelimit.rule.loop.window", "1h", "ratelimit.rule.loop.key", "global");
                JettyApp app = JettyApp.start(settings);
                if (i % 2 == 0) {
                    app.get("/hello");
                }
                long started = System.nanoTime();
                app.close();
                long millis = (System.nanoTime() - started) / 1_000_000;
                closes.add(millis);
                worst = Math.max(worst, millis);
            }
        } finally {
            spinners.close();
        }
        System.out.println("SentinelCloseEdgesTest undeploys (ms): " + closes);
        Thread.sleep(1_500); // the gate relays its last held connections, which find their client gone
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<Thread> left = listenerThreads();
        left.removeAll(earlier);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
            left = listenerThreads();
            left.removeAll(earlier);
        }
        assertThat(left.stream().map(Thread::getName).toList()).as("listener threads after 12 undeploys (closes took %s ms)", closes).isEmpty();
        assertThat(new int[] {subscribed(port(nodes.get(0))), subscribed(port(nodes.get(1)))})
                .as("subscribed connections on the live sentinels").isEqualTo(before);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        assertThat(server.queryNames(new ObjectName("dev.ratelimit:*"), null)).as("MBeans after the undeploys")
                .isEmpty();
        assertThat(worst).as("worst undeploy in ms, of %s", closes).isLessThan(3_000);
        slow.close();
    }

    /**
     * A sentinel down while the application runs: its listener sleeps between attempts (Jedis
     * waits 5 s). The undeploy must not leave it behind for those seconds: a server checks
     * for the application's threads just after the undeploy (Tomcat's "appears to have started a
     * thread ... but has failed to stop it").
     */
    @Test
    void theListenerOfADownSentinelEndsWithTheUndeploy() throws Exception {
        int down;
        try (ServerSocket unused = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            down = unused.getLocalPort();
        }
        Map<String, String> settings = JettyApp.settings("redis://sentinel-managed",
                "ratelimit.valkey.sentinel.master", ValkeySentinels.MASTER,
                "ratelimit.valkey.sentinel.nodes", topology.sentinelNodes().get(0) + ",127.0.0.1:" + down,
                "ratelimit.valkey.connect-timeout", "200ms",
                "ratelimit.rules", "down", "ratelimit.rule.down.limit", "100",
                "ratelimit.rule.down.window", "1h", "ratelimit.rule.down.key", "global");
        JettyApp app = JettyApp.start(settings);
        assertThat(app.get("/hello").statusCode()).isEqualTo(200);
        Thread.sleep(500); // the listener of the down sentinel failed its connect and sleeps
        assertThat(listeners("127.0.0.1:" + down)).as("the listener while deployed").isNotEmpty();
        long started = System.nanoTime();
        app.close();
        long closeMillis = (System.nanoTime() - started) / 1_000_000;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!listeners("127.0.0.1:" + down).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        long goneMillis = (System.nanoTime() - started) / 1_000_000;
        System.out.println("SentinelCloseEdgesTest down sentinel: undeploy " + closeMillis + " ms, listener gone after "
                + goneMillis + " ms");
        assertThat(goneMillis).as("ms from the undeploy's start (which took %s ms) to no listener of the down "
                + "sentinel", closeMillis).isLessThan(closeMillis + 500);
    }

    static int port(String node) {
        return Integer.parseInt(node.substring(node.lastIndexOf(':') + 1));
    }

    /** Connections subscribed to a channel on the sentinel at that port, as its CLIENT LIST says. */
    static int subscribed(int sentinelPort) {
        try (Jedis jedis = new Jedis("127.0.0.1", sentinelPort)) {
            int count = 0;
            for (String line : jedis.clientList().split("\n")) {
                if (line.contains(" sub=1") || line.contains("cmd=subscribe")) {
                    count++;
                }
            }
            return count;
        }
    }

    static List<Thread> listenerThreads() {
        return new ArrayList<>(Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(thread -> thread.getName().contains("SentinelListener")).toList());
    }

    static List<String> listeners(String node) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.contains("SentinelListener-[" + node)).toList();
    }

    /**
     * A loopback port whose accept queue is full until opened: a connect to it waits (the kernel
     * drops the SYN and the client sends it again after 1 s, 3 s, 7 s) rather than failing; once
     * opened, connections are relayed to the target port.
     */
    static final class StalledPort implements AutoCloseable {

        private final ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        private final int target;
        private final List<Socket> sockets = new ArrayList<>();
        private int fillers;

        StalledPort(int target) throws IOException {
            this.target = target;
            while (true) {
                Socket filler = new Socket();
                try {
                    filler.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()), 300);
                    sockets.add(filler);
                    fillers++;
                } catch (SocketTimeoutException e) {
                    filler.close();
                    break;
                }
            }
        }

        int port() {
            return server.getLocalPort();
        }

        void open() {
            Thread acceptor = new Thread(() -> {
                int accepted = 0;
                while (!server.isClosed()) {
                    try {
                        Socket client = server.accept();
                        if (accepted++ < fillers) {
                            client.close();
                            continue;
                        }
                        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                        synchronized (sockets) {
                            sockets.add(client);
                            sockets.add(upstream);
                        }
                        Gate.relay(client.getInputStream(), upstream.getOutputStream(), "stalled-port-relay");
                        Gate.relay(upstream.getInputStream(), client.getOutputStream(), "stalled-port-relay");
                    } catch (IOException e) {
                        // closed
                    }
                }
            }, "stalled-port");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (sockets) {
                for (Socket socket : sockets) {
                    socket.close();
                }
            }
        }
    }
}
