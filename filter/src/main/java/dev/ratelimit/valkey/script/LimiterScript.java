package dev.ratelimit.valkey.script;

import dev.ratelimit.Algorithm;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The limiter's code on Valkey: one Valkey Functions library joined at start-up from the
 * prelude, the bucket the token bucket and GCRA share, every algorithm's file and the dispatcher (see {@code dispatcher.lua} for the layout
 * of KEYS, ARGV and the reply), registering two functions: {@code <name>}, which decides, and
 * {@code <name>_refund} ({@code refund.lua}), which gives units back.
 *
 * <p>A function is loaded once ({@code FUNCTION LOAD}) and then called by name
 * ({@code FCALL}): unlike a script, whose whole top level (prelude, five algorithm closures)
 * runs again on every call, the library's top level runs only when it is loaded.
 * Functions are also persisted and replicated, so a restarted server or a promoted replica
 * still has them. The library's name carries a digest of its code, so two versions of the
 * application in a rolling deploy each find their own library and never replace the other's.
 *
 * <p>When Valkey does not know the function (the first call, an empty new server,
 * {@code FUNCTION FLUSH}), the library is loaded on the node that serves the call's keys and
 * the call is made again.
 */
public final class LimiterScript {

    /** Load-and-call rounds before giving up: a flush between the load and the call is a race, not a loop. */
    private static final int ATTEMPTS = 3;
    private static final String REFUND_SUFFIX = "_refund";

    private final String name;
    private final String library;

    private LimiterScript(String name, String library) {
        this.name = name;
        this.library = library;
    }

    /** The library assembled from the resource files next to this class. */
    public static LimiterScript load() {
        // The call format's counts, from their one owner (see prelude.lua).
        StringBuilder body = new StringBuilder("local RULE_ARGS, RULE_REPLY, REFUND_ARGS = ")
                .append(ScriptFormat.RULE_ARGS).append(", ").append(ScriptFormat.RULE_REPLY).append(", ")
                .append(ScriptFormat.REFUND_ARGS).append('\n')
                .append(read("prelude.lua")).append('\n').append(read("bucket.lua"));
        body.append("\nlocal ALGORITHMS = {}\n");
        for (Algorithm algorithm : Algorithm.values()) {
            body.append("\nALGORITHMS['").append(algorithm.id()).append("'] = (function()\n")
                    .append(read(algorithm.id() + ".lua"))
                    .append("\nend)()\n");
        }
        String dispatcher = read("dispatcher.lua");
        String refund = read("refund.lua");
        String name = "ratelimit_" + sha1(body + dispatcher + refund).substring(0, 16);
        body.append("\nredis.register_function('").append(name).append("', (function()\n")
                .append(dispatcher)
                .append("\nend)())\n");
        body.append("\nredis.register_function('").append(name).append(REFUND_SUFFIX).append("', (function()\n")
                .append(refund)
                .append("\nend)())\n");
        return new LimiterScript(name, "#!lua name=" + name + "\n" + body);
    }

    /** The library's code, as loaded into Valkey. */
    String library() {
        return library;
    }

    /** The name of the library and of its deciding function. */
    String name() {
        return name;
    }

    /** The name of its function that gives units back (see {@code refund.lua}). */
    public String refundName() {
        return name + REFUND_SUFFIX;
    }

    /**
     * Calls the deciding function; if Valkey does not know it, loads the library on the node of
     * these keys and calls again.
     *
     * @param client  the Valkey client, which loads the library
     * @param calls   how the call is sent: {@code client::fcall}, or through a pipeline
     * @param keys    KEYS (they also route the call on a cluster)
     * @param args    ARGV
     * @return the function's reply
     */
    public Object run(UnifiedJedis client, FunctionCalls calls, List<String> keys, List<String> args) {
        return run(client, calls, name, keys, args);
    }

    /**
     * Calls one of the library's functions, loading the library where Valkey does not know it.
     *
     * @param client   the Valkey client, which loads the library
     * @param calls    how the call is sent
     * @param function {@link #name()} or {@link #refundName()}
     * @param keys     KEYS
     * @param args     ARGV
     * @return the function's reply
     */
    public Object run(UnifiedJedis client, FunctionCalls calls, String function, List<String> keys, List<String> args) {
        for (int attempt = 1; ; attempt++) {
            try {
                return calls.fcall(function, keys, args);
            } catch (JedisDataException e) {
                if (attempt == ATTEMPTS || !isMissingFunction(e)) {
                    throw e;
                }
                client.sendCommand(keys.get(0), Protocol.Command.FUNCTION, "LOAD", "REPLACE", library);
            }
        }
    }

    /** How a function call reaches Valkey. */
    @FunctionalInterface
    public interface FunctionCalls {
        /** {@code FCALL function keys args}: the reply, or Jedis's exception. */
        Object fcall(String function, List<String> keys, List<String> args);
    }

    private static boolean isMissingFunction(JedisDataException e) {
        return e.getMessage() != null && e.getMessage().toLowerCase(Locale.ROOT).contains("function not found");
    }

    private static String read(String name) {
        try (InputStream in = LimiterScript.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + name + " next to "
                        + LimiterScript.class.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + name, e);
        }
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java platform", e);
        }
    }
}
