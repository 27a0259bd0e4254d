package dev.ratelimit.it;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real three-node Valkey Cluster on loopback, each node its own {@code valkey-server}
 * process owning a third of the 16384 slots. Built with CLUSTER MEET and ADDSLOTSRANGE, so it
 * needs nothing but the server binary.
 */
public final class ValkeyCluster implements AutoCloseable {

    private static final int SLOTS = 16_384;

    private final List<ValkeyServer> nodes;
    private final List<Integer> ports;
    private final Path directory;

    private ValkeyCluster(List<ValkeyServer> nodes, List<Integer> ports, Path directory) {
        this.nodes = nodes;
        this.ports = ports;
        this.directory = directory;
    }

    /**
     * Starts a cluster of {@code size} primaries and waits until it reports {@code cluster_state:ok}.
     *
     * @param size number of nodes, at least 1
     * @return the running cluster
     */
    public static ValkeyCluster start(int size) {
        Path directory;
        try {
            directory = Files.createTempDirectory("valkey-cluster");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<ValkeyServer> nodes = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ValkeyServer node = ValkeyServer.startProcess(List.of("--cluster-enabled", "yes",
                    "--cluster-config-file", directory.resolve("nodes-" + i + ".conf").toString(),
                    "--cluster-node-timeout", "5000"));
            nodes.add(node);
            ports.add(HostAndPort.from(node.url().substring("redis://".length())).getPort());
        }
        ValkeyCluster cluster = new ValkeyCluster(nodes, ports, directory);
        cluster.form();
        return cluster;
    }

    private void form() {
        for (int i = 0; i < nodes.size(); i++) {
            try (Jedis node = nodes.get(i).connect()) {
                int from = SLOTS * i / nodes.size();
                int to = SLOTS * (i + 1) / nodes.size() - 1;
                node.clusterAddSlotsRange(from, to);
                if (i > 0) {
                    node.clusterMeet("127.0.0.1", ports.get(0));
                }
            }
        }
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (nodes.stream().allMatch(this::ready)) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while forming the cluster", e);
            }
        }
        throw new IllegalStateException("the cluster did not reach cluster_state:ok within 20 s");
    }

    private boolean ready(ValkeyServer node) {
        try (Jedis jedis = node.connect()) {
            String info = jedis.clusterInfo();
            return info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:" + nodes.size());
        }
    }

    /**
     * A URL of one node, from which a cluster client discovers the rest.
     *
     * @return {@code redis://127.0.0.1:<port>}
     */
    public String seedUrl() {
        return nodes.get(0).url();
    }

    /**
     * Every node, e.g. to look at which keys each one holds.
     *
     * @return the nodes
     */
    public List<ValkeyServer> nodes() {
        return List.copyOf(nodes);
    }

    /** Empties every node. */
    public void flushAll() {
        for (ValkeyServer node : nodes) {
            node.flushAll();
        }
    }

    @Override
    public void close() {
        for (ValkeyServer node : nodes) {
            node.close();
        }
        try (var files = Files.list(directory)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            // a temporary directory: nothing depends on its removal
        }
    }
}
