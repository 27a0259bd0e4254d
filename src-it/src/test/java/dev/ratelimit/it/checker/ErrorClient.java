package dev.ratelimit.it.checker;

import dev.ratelimit.it.PooledConnections;
import dev.ratelimit.valkey.ValkeySettings;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.providers.PooledConnectionProvider;
import redis.clients.jedis.util.JedisURIHelper;

import java.net.URI;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A client of a single Valkey as the limiter builds one from {@link ValkeySettings#of} (the
 * same timeouts, pool and protocol), whose connections can be told to throw instead of sending
 * the next commands: an {@link Error}, what Valkey itself cannot cause (the client out of
 * memory, or out of stack), or a broken connection. Everything else is the real client talking
 * to the real server. A fault is thrown before a command is written (a pipeline's, after its
 * commands were written and before the replies are read); the history takes either as a call
 * that may have run, which only loosens the bounds. Every command sent, and every connection
 * that could not be opened, is recorded as a {@link Event.Wire}: what the circuit breaker's
 * promises are checked against. In a child JVM of the two-JVM target ({@link ChildLimiterMain})
 * the same client, its faults armed from the checker, records nothing.
 */
final class ErrorClient implements ClientFaults {

    private final Queue<Throwable> armed = new ConcurrentLinkedQueue<>();
    private final AtomicInteger errors = new AtomicInteger();
    private final History history;
    private final LongSupplier op;
    private final LongSupplier clock;
    private final int instance;

    /**
     * A client factory whose commands are recorded.
     *
     * @param history  where the commands go
     * @param op       the operation being run
     * @param clock    the client clock
     * @param instance the limiter instance the client is for
     */
    ErrorClient(History history, LongSupplier op, LongSupplier clock, int instance) {
        this.history = history;
        this.op = op;
        this.clock = clock;
        this.instance = instance;
    }

    /** A client factory whose commands are not recorded: in a JVM without the run's history. */
    ErrorClient() {
        this(null, () -> 0, () -> 0, 0);
    }

    /**
     * The next {@code count} commands (sent alone or as a pipeline) each throw an Error: out
     * of memory and out of stack, in turn.
     *
     * @param count how many
     */
    @Override
    public void armErrors(int count) {
        for (int i = 0; i < count; i++) {
            armed.add(errors.incrementAndGet() % 2 == 1
                    ? new OutOfMemoryError("injected by the checker: client out of memory")
                    : new StackOverflowError("injected by the checker: client out of stack"));
        }
    }

    /**
     * The next {@code count} commands each fail as a connection reset would.
     *
     * @param count how many
     */
    @Override
    public void armResets(int count) {
        for (int i = 0; i < count; i++) {
            armed.add(new JedisConnectionException("injected by the checker: connection reset"));
        }
    }

    /** Forgets the faults not thrown yet. */
    /** Whether armed faults are left for the next commands. */
    boolean armed() {
        return !armed.isEmpty();
    }

    void disarm() {
        armed.clear();
    }

    /**
     * A client of the server at {@code url} with the limiter's default settings.
     *
     * @param url the server
     * @return a new client; the caller closes it
     */
    RedisClient client(String url) {
        ValkeySettings settings = ValkeySettings.of(url);
        HostAndPort address = JedisURIHelper.getHostAndPort(URI.create(url));
        JedisClientConfig config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis((int) settings.connectTimeout().toMillis())
                .socketTimeoutMillis((int) settings.socketTimeout().toMillis())
                .serverDefaultProtocol()
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
                .build();
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(settings.poolMaxTotal());
        pool.setMaxIdle(settings.poolMaxIdle());
        pool.setMaxWait(settings.poolMaxWait());
        pool.setBlockWhenExhausted(true);
        pool.setJmxEnabled(false);
        return RedisClient.builder().hostAndPort(address).clientConfig(config)
                .connectionProvider(new PooledConnectionProvider(new PooledConnections(() -> wire("connect", () -> {
                    Connection connection = new ErringConnection(address, config);
                    connection.connect();
                    return connection;
                })), pool)).build();
    }

    /** Throws the next armed fault, if any. */
    private void maybeThrow() {
        Throwable fault = armed.poll();
        if (fault instanceof Error error) {
            throw error;
        }
        if (fault != null) {
            throw (RuntimeException) fault;
        }
    }

    /** Runs a command, recording when it was sent, when it returned and what it threw. */
    private <T> T wire(String command, Supplier<T> send) {
        if (history == null) {
            return send.get();
        }
        long began = history.real();
        try {
            T result = send.get();
            history.add(new Event.Wire(op.getAsLong(), clock.getAsLong(), history.real(), began, instance, command, null));
            return result;
        } catch (RuntimeException | Error e) {
            history.add(new Event.Wire(op.getAsLong(), clock.getAsLong(), history.real(), began, instance, command,
                    RecordingStore.describe(e)));
            throw e;
        }
    }

    /** A real connection, but for the armed Errors. */
    private final class ErringConnection extends Connection {
        ErringConnection(HostAndPort address, JedisClientConfig config) {
            super(address, config);
        }

        @Override
        public <T> T executeCommand(CommandObject<T> command) {
            return wire(command.getArguments().getCommand().toString(), () -> {
                maybeThrow();
                return super.executeCommand(command);
            });
        }

        /** What a pipeline reads its replies with, after writing its commands. */
        @Override
        public List<Object> getMany(int count) {
            return wire("pipeline of " + count, () -> {
                flush();
                maybeThrow();
                return super.getMany(count);
            });
        }
    }
}
