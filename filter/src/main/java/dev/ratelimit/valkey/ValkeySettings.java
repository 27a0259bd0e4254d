package dev.ratelimit.valkey;

import dev.ratelimit.valkey.connection.ValkeyUrl;
import redis.clients.jedis.HostAndPort;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How to reach Valkey, and how long any call may take. Immutable; start from {@link #of} and
 * adjust with the {@code with…} methods.
 *
 * <p>Every bound is tens of milliseconds by default: a slow or dead Valkey must add at most
 * that to a request, never seconds.
 */
public final class ValkeySettings {


    /** Default connect timeout. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofMillis(50);
    /** Default socket (reply) timeout. */
    public static final Duration DEFAULT_SOCKET_TIMEOUT = Duration.ofMillis(50);
    /** Default pool size. */
    public static final int DEFAULT_POOL_MAX_TOTAL = 32;
    /** Default wait for a pooled connection. */
    public static final Duration DEFAULT_POOL_MAX_WAIT = Duration.ofMillis(20);

    private final String url;
    private final Duration connectTimeout;
    private final Duration socketTimeout;
    private final int poolMaxTotal;
    private final int poolMaxIdle;
    private final Duration poolMaxWait;
    private final Optional<Path> tlsCaFile;
    private final boolean cluster;
    private final Optional<Sentinel> sentinel;

    private ValkeySettings(String url, Duration connectTimeout, Duration socketTimeout, int poolMaxTotal,
                           int poolMaxIdle, Duration poolMaxWait, Optional<Path> tlsCaFile, boolean cluster,
                           Optional<Sentinel> sentinel) {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(socketTimeout, "socketTimeout");
        Objects.requireNonNull(poolMaxWait, "poolMaxWait");
        Objects.requireNonNull(tlsCaFile, "tlsCaFile");
        Objects.requireNonNull(sentinel, "sentinel");
        if (cluster && sentinel.isPresent()) {
            throw new IllegalArgumentException("a Valkey Cluster and a Sentinel-managed primary cannot both be "
                    + "configured: a cluster fails over by itself");
        }
        urlProblem(url).ifPresent(problem -> {
            throw new IllegalArgumentException("Valkey URL " + redact(url) + " " + problem);
        });
        requirePositiveMillis("connect timeout", connectTimeout);
        requirePositiveMillis("socket timeout", socketTimeout);
        requirePositiveMillis("pool max wait", poolMaxWait);
        if (poolMaxTotal < 1) {
            throw new IllegalArgumentException("pool max total " + poolMaxTotal + " must be at least 1");
        }
        if (poolMaxIdle < 0 || poolMaxIdle > poolMaxTotal) {
            throw new IllegalArgumentException("pool max idle " + poolMaxIdle
                    + " must be between 0 and pool max total (" + poolMaxTotal + ")");
        }
        this.url = url;
        this.connectTimeout = connectTimeout;
        this.socketTimeout = socketTimeout;
        this.poolMaxTotal = poolMaxTotal;
        this.poolMaxIdle = poolMaxIdle;
        this.poolMaxWait = poolMaxWait;
        this.tlsCaFile = tlsCaFile;
        this.cluster = cluster;
        this.sentinel = sentinel;
    }

    /**
     * {@code redis://[user:password@]host[:port][/db]} or {@code rediss://…} for TLS.
     *
     * @return the url
     */
    public String url() {
        return url;
    }

    /**
     * Time to open a connection. Default 50 ms.
     *
     * @return the connect timeout
     */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * Time to wait for a reply. Default 50 ms.
     *
     * @return the socket timeout
     */
    public Duration socketTimeout() {
        return socketTimeout;
    }

    /**
     * Most connections open at once. Default 32.
     *
     * @return the pool max total
     */
    public int poolMaxTotal() {
        return poolMaxTotal;
    }

    /**
     * Most idle connections kept. Default 32.
     *
     * @return the pool max idle
     */
    public int poolMaxIdle() {
        return poolMaxIdle;
    }

    /**
     * Time to wait for a free connection when all are busy. Default 20 ms.
     *
     * @return the pool max wait
     */
    public Duration poolMaxWait() {
        return poolMaxWait;
    }

    /**
     * For {@code rediss://}: a PEM file of the CA certificates to trust instead of the JVM's trust
     * store. Default: the JVM's trust store. The server's host name is verified against its
     * certificate either way.
     *
     * @return the tls ca file
     */
    public Optional<Path> tlsCaFile() {
        return tlsCaFile;
    }

    /**
     * Whether the URL names one node of a Valkey Cluster (the others are discovered) rather than a
     * standalone server. Default: false.
     *
     * @return the cluster
     */
    public boolean cluster() {
        return cluster;
    }

    /**
     * The Sentinel-managed primary to use instead of the URL's host: its name and the sentinels
     * that know it. The URL then gives only the scheme (TLS or not), the credentials and the
     * database, which serve the sentinels too. Default: none.
     *
     * @return the sentinel
     */
    public Optional<Sentinel> sentinel() {
        return sentinel;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ValkeySettings o && url.equals(o.url) && connectTimeout.equals(o.connectTimeout)
                && socketTimeout.equals(o.socketTimeout) && poolMaxTotal == o.poolMaxTotal
                && poolMaxIdle == o.poolMaxIdle && poolMaxWait.equals(o.poolMaxWait) && tlsCaFile.equals(o.tlsCaFile)
                && cluster == o.cluster && sentinel.equals(o.sentinel);
    }

    @Override
    public int hashCode() {
        return Objects.hash(url, connectTimeout, socketTimeout, poolMaxTotal, poolMaxIdle, poolMaxWait, tlsCaFile, cluster,
                sentinel);
    }


    /**
     * Settings for the URL with every default.
     *
     * @param url {@code redis://…} or {@code rediss://…}
     * @return the settings
     */
    public static ValkeySettings of(String url) {
        return new ValkeySettings(url, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SOCKET_TIMEOUT, DEFAULT_POOL_MAX_TOTAL,
                DEFAULT_POOL_MAX_TOTAL, DEFAULT_POOL_MAX_WAIT, Optional.empty(), false, Optional.empty());
    }

    /**
     * These settings with another connect timeout.
     *
     * @param timeout time to open a connection, positive
     * @return new settings
     */
    public ValkeySettings withConnectTimeout(Duration timeout) {
        return new ValkeySettings(url, timeout, socketTimeout, poolMaxTotal, poolMaxIdle, poolMaxWait, tlsCaFile, cluster,
                sentinel);
    }

    /**
     * These settings with another socket timeout.
     *
     * @param timeout time to wait for a reply, positive
     * @return new settings
     */
    public ValkeySettings withSocketTimeout(Duration timeout) {
        return new ValkeySettings(url, connectTimeout, timeout, poolMaxTotal, poolMaxIdle, poolMaxWait, tlsCaFile, cluster,
                sentinel);
    }

    /**
     * These settings with another pool size.
     *
     * @param maxTotal most connections open at once
     * @param maxIdle  most idle connections kept
     * @return new settings
     */
    public ValkeySettings withPool(int maxTotal, int maxIdle) {
        return new ValkeySettings(url, connectTimeout, socketTimeout, maxTotal, maxIdle, poolMaxWait, tlsCaFile, cluster,
                sentinel);
    }

    /**
     * These settings with another wait for a pooled connection.
     *
     * @param maxWait time to wait when every connection is busy, positive
     * @return new settings
     */
    public ValkeySettings withPoolMaxWait(Duration maxWait) {
        return new ValkeySettings(url, connectTimeout, socketTimeout, poolMaxTotal, poolMaxIdle, maxWait, tlsCaFile, cluster,
                sentinel);
    }

    /**
     * These settings trusting the CA certificates in a PEM file for {@code rediss://}.
     *
     * @param caFile a PEM file with one or more certificates
     * @return new settings
     */
    public ValkeySettings withTlsCaFile(Path caFile) {
        return new ValkeySettings(url, connectTimeout, socketTimeout, poolMaxTotal, poolMaxIdle, poolMaxWait,
                Optional.of(caFile), cluster, sentinel);
    }

    /**
     * These settings for a Valkey Cluster: the URL names one node, the others are discovered.
     *
     * @param cluster whether the URL names a cluster node
     * @return new settings
     */
    public ValkeySettings withCluster(boolean cluster) {
        return new ValkeySettings(url, connectTimeout, socketTimeout, poolMaxTotal, poolMaxIdle, poolMaxWait,
                tlsCaFile, cluster, sentinel);
    }

    /**
     * These settings for a primary managed by Valkey Sentinel: the client asks the sentinels
     * where the primary is and follows it when they fail over. The URL's host and port are not
     * used; its scheme, credentials and database are, for the primary and the sentinels.
     *
     * @param master the name the sentinels monitor the primary by
     * @param nodes  the sentinels, {@code host:port} each, at least one
     * @return new settings
     */
    public ValkeySettings withSentinel(String master, List<String> nodes) {
        return new ValkeySettings(url, connectTimeout, socketTimeout, poolMaxTotal, poolMaxIdle, poolMaxWait,
                tlsCaFile, cluster, Optional.of(new Sentinel(master, nodes)));
    }

    /**
     * Where the sentinels are, and which primary of theirs to use.
     *
     * @param master the name the sentinels monitor the primary by ({@code sentinel monitor <name> ...})
     * @param nodes  the sentinels, {@code host:port} each, at least one
     */
    public record Sentinel(String master, List<String> nodes) {

        /**
         * A host name or IPv4 address (an IPv6 one unbracketed, as before brackets were asked), or
         * an [IPv6] address: not a URL, a user, a space, which the client would try to resolve.
         */
        private static final Pattern NODE_HOST = Pattern.compile("[A-Za-z0-9._:-]+|\\[[0-9A-Fa-f:.]+(%[A-Za-z0-9._-]+)?]");

        /**
         * Validates both.
         *
         * @throws IllegalArgumentException naming the bad value
         */
        public Sentinel {
            Objects.requireNonNull(master, "master");
            Objects.requireNonNull(nodes, "nodes");
            nodes = List.copyOf(nodes);
            if (master.isBlank() || !master.equals(master.strip())) {
                throw new IllegalArgumentException("sentinel master name '" + master + "' must be a non-empty name "
                        + "without surrounding spaces");
            }
            if (nodes.isEmpty()) {
                throw new IllegalArgumentException("sentinel nodes must list at least one host:port");
            }
            for (String node : nodes) {
                hostAndPort(node);
            }
        }

        /** The sentinels as Jedis addresses. */
        Set<HostAndPort> addresses() {
            Set<HostAndPort> addresses = new LinkedHashSet<>();
            for (String node : nodes) {
                addresses.add(hostAndPort(node));
            }
            return addresses;
        }

        private static HostAndPort hostAndPort(String node) {
            int colon = node.lastIndexOf(':');
            String host = colon > 0 ? node.substring(0, colon) : "";
            int port = -1;
            if (colon > 0) {
                try {
                    port = Integer.parseInt(node.substring(colon + 1));
                } catch (NumberFormatException e) {
                    port = -1;
                }
            }
            if (!NODE_HOST.matcher(host).matches() || port < 1 || port > 65_535) {
                throw new IllegalArgumentException("sentinel node '" + node + "' must be host:port with a port "
                        + "from 1 to 65535");
            }
            return new HostAndPort(host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1)
                    : host, port);
        }
    }

    /**
     * The URL with any password replaced by {@code ***}, for logs and messages.
     *
     * @return the redacted URL
     */
    public String redactedUrl() {
        return sentinel.map(s -> "Sentinel primary '" + s.master() + "' via " + String.join(",", s.nodes())
                + " (" + redact(url) + ")").orElse(redact(url));
    }

    @Override
    public String toString() {
        return "ValkeySettings[url=" + redactedUrl() + ", connectTimeout=" + connectTimeout + ", socketTimeout="
                + socketTimeout + ", poolMaxTotal=" + poolMaxTotal + ", poolMaxIdle=" + poolMaxIdle
                + ", poolMaxWait=" + poolMaxWait + ", tlsCaFile=" + tlsCaFile + ", cluster=" + cluster
                + ", sentinel=" + sentinel + "]";
    }

    /**
     * The text with the user-info part of a URL's authority masked.
     *
     * @param url any text meant as a URL
     * @return it with {@code user:password@} shown as {@code user:***@}
     */
    public static String redact(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (scheme < 0 || at < scheme) {
            return url;
        }
        String userInfo = url.substring(scheme + 3, at);
        int colon = userInfo.indexOf(':');
        String shown = colon < 0 ? "***" : userInfo.substring(0, colon) + ":***";
        return url.substring(0, scheme + 3) + shown + url.substring(at);
    }

    /**
     * Why a Valkey URL cannot work, in words that follow it: a scheme other than {@code redis} or
     * {@code rediss}, no host the client can read, a port outside 1 to 65535, a path other than
     * a database number. Never the URL itself, whose password the caller masks.
     *
     * @param url the URL
     * @return the rule it breaks, e.g. {@code has port 99999: a port is from 1 to 65535}; empty
     *         when it can work
     */
    public static Optional<String> urlProblem(String url) {
        return ValkeyUrl.problem(url);
    }

    private static void requirePositiveMillis(String what, Duration value) {
        if (value.toMillis() < 1 || value.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + " " + value + " must be between 1 ms and "
                    + Integer.MAX_VALUE + " ms");
        }
    }
}
