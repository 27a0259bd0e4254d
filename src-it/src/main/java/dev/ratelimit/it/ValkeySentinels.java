package dev.ratelimit.it;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A Sentinel-managed primary on loopback: one primary, one replica and three
 * {@code valkey-sentinel} processes (quorum 2), each its own process, as in production. The
 * sentinels declare the primary down after {@value #DOWN_AFTER_MS} ms without an answer and
 * promote the replica; the failover is Valkey's own.
 */
public final class ValkeySentinels implements AutoCloseable {

    /** The name the sentinels monitor the primary by. */
    public static final String MASTER = "ratelimit-primary";
    /** How long the sentinels wait for the primary before declaring it down. */
    public static final int DOWN_AFTER_MS = 1_000;

    private final ValkeyServer primary;
    private final ValkeyServer replica;
    private final List<Process> sentinels;
    private final List<Integer> sentinelPorts;
    private final Path directory;

    private ValkeySentinels(ValkeyServer primary, ValkeyServer replica, List<Process> sentinels,
                            List<Integer> sentinelPorts, Path directory) {
        this.primary = primary;
        this.replica = replica;
        this.sentinels = sentinels;
        this.sentinelPorts = sentinelPorts;
        this.directory = directory;
    }

    /**
     * Starts the primary, its replica (waiting until it is in sync) and three sentinels (waiting
     * until each knows the primary and the replica).
     *
     * @return the running topology
     */
    public static ValkeySentinels start() {
        Path directory;
        try {
            directory = Files.createTempDirectory("valkey-sentinel");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // A replica's full synchronisation starts at once: by default the primary waits five
        // seconds for more replicas to share one transfer, and a former primary made a replica
        // after a failover needs a full one.
        List<String> syncAtOnce = List.of("--repl-diskless-sync-delay", "0");
        ValkeyServer primary = ValkeyServer.startProcess(syncAtOnce);
        int primaryPort = port(primary);
        List<String> replicaArgs = new ArrayList<>(syncAtOnce);
        replicaArgs.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(primaryPort)));
        ValkeyServer replica = ValkeyServer.startProcess(replicaArgs);
        List<Process> sentinels = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        ValkeySentinels topology = new ValkeySentinels(primary, replica, sentinels, ports, directory);
        try {
            await("the replica to sync", Duration.ofSeconds(20), () -> {
                try (Jedis jedis = replica.connect()) {
                    return jedis.info("replication").contains("master_link_status:up");
                }
            });
            for (int i = 0; i < 3; i++) {
                int port = ValkeyServer.freePort();
                Path config = directory.resolve("sentinel-" + i + ".conf");
                Files.writeString(config, String.join("\n",
                        "port " + port,
                        "bind 127.0.0.1",
                        "dir " + directory,
                        "sentinel monitor " + MASTER + " 127.0.0.1 " + primaryPort + " 2",
                        "sentinel down-after-milliseconds " + MASTER + " " + DOWN_AFTER_MS,
                        "sentinel failover-timeout " + MASTER + " 10000",
                        "sentinel parallel-syncs " + MASTER + " 1",
                        ""));
                sentinels.add(new ProcessBuilder(sentinelCommand(config)).redirectErrorStream(true)
                        .redirectOutput(directory.resolve("sentinel-" + i + ".log").toFile()).start());
                ports.add(port);
            }
            for (int port : ports) {
                await("sentinel " + port + " to know the primary and its replica", Duration.ofSeconds(20), () -> {
                    try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", port), ValkeyServer.plainConfig(500))) {
                        String info = jedis.info("sentinel");
                        return info.contains("slaves=1") && info.contains("sentinels=3");
                    } catch (RuntimeException e) {
                        return false;
                    }
                });
            }
            return topology;
        } catch (IOException | RuntimeException e) {
            topology.close();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    /** {@code valkey-sentinel <config>}, or the server binary in sentinel mode when only it is installed. */
    private static List<String> sentinelCommand(Path config) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path sentinel = Path.of(dir, "valkey-sentinel");
            if (Files.isExecutable(sentinel)) {
                return List.of(sentinel.toString(), config.toString());
            }
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path server = Path.of(dir, "valkey-server");
            if (Files.isExecutable(server)) {
                return List.of(server.toString(), config.toString(), "--sentinel");
            }
        }
        throw new IllegalStateException("the Sentinel tests need valkey-sentinel (Debian: apt-get install -t "
                + "bookworm-backports valkey-sentinel) or valkey-server on PATH. " + ValkeyServer.HOW_TO_GET_ONE);
    }

    /**
     * The sentinels, as {@code ratelimit.valkey.sentinel.nodes} takes them.
     *
     * @return {@code 127.0.0.1:<port>} each
     */
    public List<String> sentinelNodes() {
        return sentinelPorts.stream().map(port -> "127.0.0.1:" + port).toList();
    }

    /**
     * The primary the topology started with.
     *
     * @return the first primary
     */
    public ValkeyServer primary() {
        return primary;
    }

    /**
     * The replica, which the sentinels promote when the primary dies.
     *
     * @return the replica
     */
    public ValkeyServer replica() {
        return replica;
    }

    /**
     * Where the sentinels say the primary is now.
     *
     * @return its port, if a sentinel answers
     */
    public Optional<Integer> currentPrimaryPort() {
        for (int port : sentinelPorts) {
            try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", port), ValkeyServer.plainConfig(500))) {
                List<String> address = jedis.sentinelGetMasterAddrByName(MASTER);
                if (address != null && address.size() == 2) {
                    return Optional.of(Integer.parseInt(address.get(1)));
                }
            } catch (RuntimeException e) {
                // the next sentinel may answer
            }
        }
        return Optional.empty();
    }

    /**
     * Both servers, whichever is the primary now.
     *
     * @return the first primary and the first replica
     */
    public List<ValkeyServer> servers() {
        return List.of(primary, replica);
    }

    /**
     * The server every sentinel names as the primary now: after a failover they learn it one
     * after another (from each other's announcements, every two seconds), so until they all
     * agree a client that asks one may still be told the old one.
     *
     * @return the primary, or empty while the sentinels disagree or one does not answer
     */
    public Optional<ValkeyServer> agreedPrimary() {
        Integer agreed = null;
        for (int port : sentinelPorts) {
            try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", port), ValkeyServer.plainConfig(500))) {
                List<String> address = jedis.sentinelGetMasterAddrByName(MASTER);
                if (address == null || address.size() != 2
                        || agreed != null && agreed != Integer.parseInt(address.get(1))) {
                    return Optional.empty();
                }
                agreed = Integer.parseInt(address.get(1));
            } catch (RuntimeException e) {
                return Optional.empty();
            }
        }
        int named = agreed;
        return servers().stream().filter(server -> port(server) == named).findFirst();
    }

    /**
     * Waits until the topology can fail over with no data lost but the writes in flight: every
     * sentinel names the same primary, the other server replicates it with its link up, and the
     * first sentinel (the one {@link #failover} asks) sees that replica as healthy.
     *
     * @param timeout how long to wait at most
     * @return the primary
     * @throws IllegalStateException when that does not happen in time
     */
    public ValkeyServer awaitSteady(Duration timeout) {
        ValkeyServer[] steady = new ValkeyServer[1];
        await("the sentinels to agree on a primary and its replica to be in sync", timeout, () -> {
            Optional<ValkeyServer> primaryNow = agreedPrimary();
            if (primaryNow.isEmpty()) {
                return false;
            }
            ValkeyServer other = primaryNow.get() == primary ? replica : primary;
            try (Jedis jedis = other.connect()) {
                String info = jedis.info("replication");
                if (!info.contains("role:slave") || !info.contains("master_port:" + port(primaryNow.get()) + "\r\n")
                        || !info.contains("master_link_status:up")) {
                    return false;
                }
            } catch (RuntimeException e) {
                return false;
            }
            try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", sentinelPorts.get(0)),
                    ValkeyServer.plainConfig(500))) {
                boolean healthy = jedis.sentinelReplicas(MASTER).stream().anyMatch(known ->
                        String.valueOf(port(other)).equals(known.get("port"))
                                && !known.getOrDefault("flags", "").matches(".*(s_down|o_down|disconnected).*"));
                if (!healthy) {
                    return false;
                }
            } catch (RuntimeException e) {
                return false;
            }
            steady[0] = primaryNow.get();
            return true;
        });
        return steady[0];
    }

    /**
     * Asks the first sentinel for a failover now ({@code SENTINEL FAILOVER}, which needs no
     * agreement and no wait for the primary to be declared down), asking again while it is
     * refused (one still in progress, no replica it would promote yet).
     *
     * @param timeout how long to keep asking
     */
    public void failover(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", sentinelPorts.get(0)),
                    ValkeyServer.plainConfig(500))) {
                jedis.sentinelFailover(MASTER);
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the sentinel refused a failover for " + timeout, e);
                }
            }
            Pauses.sleep(50);
        }
    }

    /**
     * Makes a former primary a replica of the new one at once. The sentinels do it themselves,
     * but only some seconds after the failover (once it has reported itself a primary for
     * eight seconds): until then it takes the writes of any client that has not followed
     * the failover, which are lost when it resynchronises.
     *
     * @param former     the primary before the failover
     * @param newPrimary the primary after it
     */
    public void demote(ValkeyServer former, ValkeyServer newPrimary) {
        try (Jedis jedis = former.connect()) {
            jedis.replicaof("127.0.0.1", port(newPrimary));
        }
    }

    /** Deletes every key on the primary the sentinels agree on (the replica follows). */
    public void flushAll() {
        awaitSteady(Duration.ofSeconds(30)).flushAll();
    }

    /**
     * The port of a server.
     *
     * @param server a server of this topology
     * @return its port
     */
    public static int port(ValkeyServer server) {
        return HostAndPort.from(server.url().substring("redis://".length())).getPort();
    }

    @Override
    public void close() {
        for (Process sentinel : sentinels) {
            sentinel.destroyForcibly();
        }
        replica.close();
        primary.close();
        try (var files = Files.list(directory)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            // a temporary directory: nothing depends on its removal
        }
    }

    private interface Condition {
        boolean holds();
    }

    private static void await(String what, Duration timeout, Condition condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.holds()) {
                return;
            }
            Pauses.sleep(20);
        }
        throw new IllegalStateException("gave up waiting for " + what + " after " + timeout);
    }
}
