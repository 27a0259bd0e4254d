package dev.ratelimit.it;

import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.args.ClientPauseMode;
import redis.clients.jedis.util.JedisURIHelper;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real Valkey for tests and benchmarks, from the first source that works:
 * <ol>
 *   <li>{@code VALKEY_URL}, when set: a server someone else runs (it cannot be stopped or
 *       restarted from here);</li>
 *   <li>a {@code valkey-server} (or {@code redis-server}) binary on {@code PATH}, started on a
 *       free loopback port without persistence; it can be stopped, paused and restarted on the
 *       same port;</li>
 *   <li>a Testcontainers {@code valkey/valkey:8} container when a Docker engine runs;</li>
 *   <li>otherwise {@link #provide()} fails, saying how to get one. Tests never skip.</li>
 * </ol>
 */
public final class ValkeyServer implements AutoCloseable {

    /** Where to read how to get a server, for the failure message. */
    static final String HOW_TO_GET_ONE = "No Valkey for the tests: set VALKEY_URL=redis://host:port, or put "
            + "valkey-server on PATH (Debian 12: add bookworm-backports to the apt sources, then "
            + "'apt-get install -t bookworm-backports valkey-server'), or run a Docker engine for Testcontainers.";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final Backend backend;

    private ValkeyServer(Backend backend) {
        this.backend = backend;
    }

    /**
     * A running server from the first source that works.
     *
     * @return a server, ready for commands
     * @throws IllegalStateException with instructions when no source works
     */
    public static ValkeyServer provide() {
        String url = System.getenv("VALKEY_URL");
        if (url != null && !url.isBlank()) {
            return new ValkeyServer(new External(url.trim()));
        }
        Optional<Path> binary = findBinary();
        if (binary.isPresent()) {
            return new ValkeyServer(onFreePort(binary.get(), List.of()));
        }
        if (ContainerBackend.dockerAvailable()) {
            return new ValkeyServer(ContainerBackend.launch());
        }
        throw new IllegalStateException(HOW_TO_GET_ONE);
    }

    /**
     * A {@code valkey-server} process of its own, on a free loopback port, with extra
     * command-line arguments (e.g. TLS settings). Needs the binary: with only {@code VALKEY_URL}
     * or Docker it fails, saying so.
     *
     * @param extraArgs arguments appended to the server's command line
     * @return a server, ready for commands on its plain port
     * @throws IllegalStateException when no binary is on {@code PATH}
     */
    public static ValkeyServer startProcess(List<String> extraArgs) {
        Path binary = findBinary().orElseThrow(() -> new IllegalStateException(
                "this test needs its own valkey-server process (with extra settings), but none is on PATH. "
                        + HOW_TO_GET_ONE));
        return new ValkeyServer(onFreePort(binary, extraArgs));
    }

    /**
     * A process started on a free port, on another one when the port was taken between its
     * picking and the server's bind: on a machine shared with other test runs, another run's
     * server may get it first, and would then answer for this one.
     */
    private static ProcessBackend onFreePort(Path binary, List<String> extraArgs) {
        PortTaken last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            ProcessBackend process = new ProcessBackend(binary, freePort(), extraArgs);
            try {
                process.start();
                return process;
            } catch (PortTaken e) {
                last = e;
            }
        }
        throw last;
    }

    /** Another process's server answered on the port a server was started on. */
    private static final class PortTaken extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        PortTaken(String message) {
            super(message);
        }
    }

    /**
     * The server's URL, e.g. {@code redis://127.0.0.1:6390}.
     *
     * @return the URL
     */
    public String url() {
        return backend.url();
    }

    /**
     * A new plain connection for control commands and inspection; the caller closes it.
     *
     * @return a connected {@link Jedis}
     */
    public Jedis connect() {
        return new Jedis(JedisURIHelper.getHostAndPort(URI.create(url())), plainConfig(5_000));
    }

    /**
     * How many times this server ran a command since it started or its last {@code CONFIG
     * RESETSTAT}, from {@code INFO commandstats}.
     *
     * @param command the command's name in lower case, e.g. {@code fcall}
     * @return its calls; 0 if it never ran
     */
    public long commandCalls(String command) {
        try (Jedis jedis = connect()) {
            Matcher m = Pattern.compile("cmdstat_" + Pattern.quote(command) + ":calls=(\\d+)")
                    .matcher(jedis.info("commandstats"));
            return m.find() ? Long.parseLong(m.group(1)) : 0;
        }
    }

    /**
     * The name of the limiter's deciding function, as a limiter loaded it here, for a test
     * that calls it raw ({@code FCALL}).
     *
     * @return the name of the first library whose name starts with {@code ratelimit_}
     */
    public String limiterFunction() {
        try (Jedis jedis = connect()) {
            return jedis.functionList().stream().map(library -> library.getLibraryName())
                    .filter(name -> name.startsWith("ratelimit_")).findFirst().orElseThrow();
        }
    }

    /** A RESP2 connection config: plain {@code Jedis} warns on every connection otherwise. */
    static DefaultJedisClientConfig plainConfig(int timeoutMillis) {
        return DefaultJedisClientConfig.builder().serverDefaultProtocol().autoNegotiateProtocol(false)
                .timeoutMillis(timeoutMillis).build();
    }

    /** Deletes every key. */
    public void flushAll() {
        try (Jedis jedis = connect()) {
            jedis.flushAll();
        }
    }

    /**
     * Makes the server stop answering clients for a while ({@code CLIENT PAUSE ... ALL}).
     *
     * @param duration how long
     */
    public void pause(Duration duration) {
        try (Jedis jedis = connect()) {
            jedis.clientPause(duration.toMillis(), ClientPauseMode.ALL);
        }
    }

    /**
     * Blocks the whole server for a while ({@code DEBUG SLEEP}), as a long command or a stalled
     * host does: unlike {@link #pause}, commands that arrive meanwhile are run when it wakes,
     * even those whose clients gave up waiting for the reply. Returns when the server answers
     * again. Needs {@code enable-debug-command}, which the servers this harness starts allow
     * from loopback.
     *
     * @param duration how long
     */
    public void stall(Duration duration) {
        try (Jedis jedis = new Jedis(JedisURIHelper.getHostAndPort(URI.create(url())),
                plainConfig((int) duration.toMillis() + 5_000))) {
            jedis.sendCommand(() -> "DEBUG".getBytes(java.nio.charset.StandardCharsets.US_ASCII), "SLEEP",
                    String.format(java.util.Locale.ROOT, "%.3f", duration.toMillis() / 1000.0));
        }
    }

    /** Kills the server process; the port then refuses connections. */
    public void stop() {
        backend.stop();
    }

    /** Starts the server again on the same port, empty (scripts and keys are gone). */
    public void start() {
        backend.start();
    }

    /**
     * Whether this server can be stopped and started from here: not one at {@code VALKEY_URL}.
     *
     * @return false for a server someone else runs
     */
    public boolean restartable() {
        return !(backend instanceof External);
    }

    /** {@link #stop()} then {@link #start()}. */
    public void restart() {
        stop();
        start();
    }

    @Override
    public void close() {
        backend.close();
    }

    /**
     * A loopback port nobody listens on right now.
     *
     * @return the port
     */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("cannot find a free port", e);
        }
    }

    private static Optional<Path> findBinary() {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String name : List.of("valkey-server", "redis-server")) {
            for (String dir : path.split(File.pathSeparator)) {
                Path candidate = Path.of(dir, name);
                if (Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    /** Where the server comes from, and what can be done to it. */
    interface Backend extends AutoCloseable {
        String url();

        void stop();

        void start();

        @Override
        void close();
    }

    /** A server run by someone else: it can be used, not stopped. */
    private record External(String url) implements Backend {
        @Override
        public void stop() {
            throw new UnsupportedOperationException("cannot stop the server at VALKEY_URL; unset VALKEY_URL "
                    + "so the tests start their own valkey-server");
        }

        @Override
        public void start() {
            stop();
        }

        @Override
        public void close() {
        }
    }

    /** A {@code valkey-server} child process on a fixed loopback port. */
    private static final class ProcessBackend implements Backend {
        private final Path binary;
        private final int port;
        private final List<String> extraArgs;
        private Process process;

        ProcessBackend(Path binary, int port) {
            this(binary, port, List.of());
        }

        ProcessBackend(Path binary, int port, List<String> extraArgs) {
            this.binary = binary;
            this.port = port;
            this.extraArgs = List.copyOf(extraArgs);
        }

        @Override
        public String url() {
            return "redis://127.0.0.1:" + port;
        }

        @Override
        public synchronized void start() {
            if (process != null && process.isAlive()) {
                return;
            }
            List<String> command = new java.util.ArrayList<>(List.of(binary.toString(), "--port", Integer.toString(port),
                    "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
                    "--loglevel", "warning", "--enable-debug-command", "local"));
            command.addAll(extraArgs);
            try {
                process = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start " + binary + ": " + e.getMessage(), e);
            }
            awaitReady();
        }

        private void awaitReady() {
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            RuntimeException last = null;
            while (System.nanoTime() < deadline) {
                boolean alive = process.isAlive();
                try (Jedis jedis = new Jedis(new HostAndPort("127.0.0.1", port), plainConfig(200))) {
                    if ("PONG".equals(jedis.ping())) {
                        if (jedis.info("server").contains("process_id:" + process.pid() + "\r\n")) {
                            return;
                        }
                        stop();
                        throw new PortTaken("another server answers on port " + port + ", taken before "
                                + binary + " could bind it");
                    }
                } catch (PortTaken e) {
                    throw e;
                } catch (RuntimeException e) {
                    last = e;
                }
                if (!alive) {
                    throw new IllegalStateException(binary + " exited with " + process.exitValue()
                            + " on port " + port);
                }
                Pauses.sleep(20);
            }
            throw new IllegalStateException(binary + " did not answer PING on port " + port + " within "
                    + START_TIMEOUT, last);
        }

        @Override
        public synchronized void stop() {
            if (process == null) {
                return;
            }
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }

        @Override
        public void close() {
            stop();
        }
    }
}
