package dev.ratelimit.it;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.MigrateParams;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Valkey Cluster on loopback, each node its own {@code valkey-server} process: either
 * primaries only, formed with CLUSTER MEET and ADDSLOTSRANGE (nothing but the server binary
 * needed), or primaries with a replica each, formed by {@code valkey-cli --cluster create}, so
 * that the cluster fails a killed primary over by itself. Slots can be migrated under load.
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
        ValkeyCluster cluster = startNodes(size, 5_000);
        cluster.form();
        return cluster;
    }

    /**
     * Starts a cluster of {@code primaries} primaries, each with one replica, formed by
     * {@code valkey-cli --cluster create --cluster-replicas 1}, with a node timeout of
     * {@code nodeTimeoutMillis}: a primary that does not answer for that long is failed over to
     * its replica by the cluster itself.
     *
     * @param primaries         number of shards, at least 3
     * @param nodeTimeoutMillis the cluster's {@code cluster-node-timeout}
     * @return the running cluster, every slot served
     */
    public static ValkeyCluster startWithReplicas(int primaries, int nodeTimeoutMillis) {
        ValkeyCluster cluster = startNodes(2 * primaries, nodeTimeoutMillis, "--repl-diskless-sync-delay", "0");
        List<String> command = new ArrayList<>(List.of("valkey-cli", "--cluster", "create"));
        for (int port : cluster.ports) {
            command.add("127.0.0.1:" + port);
        }
        command.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        try {
            Process create = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(create.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (create.waitFor() != 0) {
                cluster.close();
                throw new IllegalStateException("valkey-cli --cluster create failed: " + output);
            }
        } catch (IOException e) {
            cluster.close();
            throw new IllegalStateException("the cluster tests need valkey-cli (Debian: valkey-tools): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating the cluster", e);
        }
        cluster.awaitReady();
        cluster.awaitReplicasInSync();
        return cluster;
    }

    private static ValkeyCluster startNodes(int count, int nodeTimeoutMillis, String... moreArgs) {
        Path directory;
        try {
            directory = Files.createTempDirectory("valkey-cluster");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<ValkeyServer> nodes = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            List<String> args = new ArrayList<>(List.of("--cluster-enabled", "yes",
                    "--cluster-config-file", directory.resolve("nodes-" + i + ".conf").toString(),
                    "--cluster-node-timeout", Integer.toString(nodeTimeoutMillis)));
            args.addAll(List.of(moreArgs));
            ValkeyServer node = ValkeyServer.startProcess(args);
            nodes.add(node);
            ports.add(HostAndPort.from(node.url().substring("redis://".length())).getPort());
        }
        return new ValkeyCluster(nodes, ports, directory);
    }

    /**
     * The node currently serving a slot as its primary, as the live nodes see it.
     *
     * @param slot a hash slot
     * @return the primary node's server
     */
    public ValkeyServer primaryOf(int slot) {
        for (ValkeyServer node : nodes) {
            try (Jedis jedis = node.connect()) {
                for (String line : jedis.clusterNodes().split("\n")) {
                    String[] fields = line.split(" ");
                    if (fields.length > 8 && fields[2].contains("master") && !fields[2].contains("fail")
                            && servesSlot(fields, slot)) {
                        int port = HostAndPort.from(fields[1].split("@")[0]).getPort();
                        return nodes.get(ports.indexOf(port));
                    }
                }
            } catch (RuntimeException e) {
                // a stopped node: ask the next
            }
        }
        throw new IllegalStateException("no live node knows who serves slot " + slot);
    }

    /**
     * Moves a slot from the primary serving it to {@code target}, as {@code valkey-cli --cluster
     * reshard} does: {@code SETSLOT IMPORTING} on the target, {@code SETSLOT MIGRATING} on the
     * source, {@code MIGRATE} of the slot's keys {@code batch} at a time with {@code pause} between
     * batches (clients meanwhile get ASK or TRYAGAIN for the keys already moved), then
     * {@code SETSLOT NODE} on the target, the source and every other primary.
     *
     * @param slot   the hash slot
     * @param target the primary that is to serve it
     * @param batch  keys per MIGRATE
     * @param pause  time between two MIGRATEs
     * @return the number of keys moved
     */
    public int migrateSlot(int slot, ValkeyServer target, int batch, Duration pause) {
        return migrateSlot(slot, target, batch, pause, List.of(), pause);
    }

    /**
     * {@link #migrateSlot(int, ValkeyServer, int, Duration)}, moving the given keys first, one
     * MIGRATE each, so that a test knows which keys have moved while others have not.
     *
     * @param first      keys of the slot to move before the others
     * @param afterFirst the pause after each of them
     */
    public int migrateSlot(int slot, ValkeyServer target, int batch, Duration pause, List<String> first,
                           Duration afterFirst) {
        ValkeyServer source = primaryOf(slot);
        if (source == target) {
            throw new IllegalArgumentException("slot " + slot + " is already served by the target");
        }
        int targetPort = ports.get(nodes.indexOf(target));
        int moved = 0;
        try (Jedis from = source.connect(); Jedis to = target.connect()) {
            String sourceId = from.clusterMyId();
            String targetId = to.clusterMyId();
            to.clusterSetSlotImporting(slot, sourceId);
            from.clusterSetSlotMigrating(slot, targetId);
            for (String key : first) {
                from.migrate("127.0.0.1", targetPort, 5_000, new MigrateParams(), key);
                moved++;
                Pauses.sleep(afterFirst.toMillis());
            }
            for (List<String> keys = from.clusterGetKeysInSlot(slot, batch); !keys.isEmpty();
                    keys = from.clusterGetKeysInSlot(slot, batch)) {
                from.migrate("127.0.0.1", targetPort, 5_000, new MigrateParams(), keys.toArray(String[]::new));
                moved += keys.size();
                Pauses.sleep(pause.toMillis());
            }
            to.clusterSetSlotNode(slot, targetId);
            from.clusterSetSlotNode(slot, targetId);
            for (ValkeyServer node : nodes) {
                if (node != source && node != target) {
                    try (Jedis other = node.connect()) {
                        if (other.info("replication").contains("role:master")) {
                            other.clusterSetSlotNode(slot, targetId);
                        }
                    }
                }
            }
        }
        return moved;
    }

    private static boolean servesSlot(String[] fields, int slot) {
        for (int i = 8; i < fields.length; i++) {
            String range = fields[i];
            if (range.startsWith("[")) {
                continue;
            }
            String[] ends = range.split("-");
            int from = Integer.parseInt(ends[0].trim());
            int to = ends.length > 1 ? Integer.parseInt(ends[1].trim()) : from;
            if (slot >= from && slot <= to) {
                return true;
            }
        }
        return false;
    }

    // A replica that has never completed a sync with its primary counts its data as too old
    // (cluster-replica-validity-factor) and never stands for election: wait for every link.
    private void awaitReplicasInSync() {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (nodes.stream().allMatch(this::primaryOrInSync)) {
                return;
            }
            Pauses.sleep(50);
        }
        throw new IllegalStateException("the replicas did not finish their first sync within 30 s");
    }

    private boolean primaryOrInSync(ValkeyServer node) {
        try (Jedis jedis = node.connect()) {
            String replication = jedis.info("replication");
            return replication.contains("role:master") || replication.contains("master_link_status:up");
        }
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (nodes.stream().allMatch(this::ready)) {
                return;
            }
            Pauses.sleep(50);
        }
        throw new IllegalStateException("the cluster did not reach cluster_state:ok on every node within 30 s");
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
        awaitReady();
    }

    private boolean ready(ValkeyServer node) {
        try (Jedis jedis = node.connect()) {
            String info = jedis.clusterInfo();
            return info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:" + nodes.size());
        }
    }

    /**
     * What the first live node says of the cluster ({@code CLUSTER NODES}), for failure messages.
     *
     * @return the node table, or a note that no node answered
     */
    public String describe() {
        for (ValkeyServer node : nodes) {
            try (Jedis jedis = node.connect()) {
                return jedis.clusterNodes();
            } catch (RuntimeException e) {
                // a stopped node: ask the next
            }
        }
        return "no node answers";
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
