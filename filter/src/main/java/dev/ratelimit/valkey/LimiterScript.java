package dev.ratelimit.valkey;

import dev.ratelimit.Algorithm;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The one script the limiter runs: the prelude, every algorithm's file, and the dispatcher,
 * joined at start-up (see {@code dispatcher.lua} for the layout of KEYS, ARGV and the reply).
 *
 * <p>It is called by its SHA-1 with {@code EVALSHA}; the body is sent only when Valkey answers
 * {@code NOSCRIPT} (the first call, and after a restart or {@code SCRIPT FLUSH}). Then the one
 * retry is an {@code EVAL} of the body, which runs the call and loads the script in one step:
 * a separate {@code SCRIPT LOAD} could itself be undone by another flush before the retry.
 */
final class LimiterScript {

    private final String source;
    private final String sha1;

    private LimiterScript(String source) {
        this.source = source;
        this.sha1 = sha1(source);
    }

    /** The script assembled from the resource files next to this class. */
    static LimiterScript load() {
        StringBuilder source = new StringBuilder(read("prelude.lua"));
        source.append("\nlocal ALGORITHMS = {}\n");
        for (Algorithm algorithm : Algorithm.values()) {
            source.append("\nALGORITHMS['").append(algorithm.id()).append("'] = (function()\n")
                    .append(read(algorithm.id() + ".lua"))
                    .append("\nend)()\n");
        }
        source.append('\n').append(read("dispatcher.lua"));
        return new LimiterScript(source.toString());
    }

    /** The full source, as loaded into Valkey. */
    String source() {
        return source;
    }

    /** The SHA-1 Valkey knows the script by. */
    String sha1() {
        return sha1;
    }

    /**
     * Runs the script by its SHA-1; if Valkey does not know it, runs (and so loads) the body.
     *
     * @param client the Valkey client
     * @param keys   KEYS (they also route the call on a cluster)
     * @param args   ARGV
     * @return the script's reply
     */
    Object run(UnifiedJedis client, List<String> keys, List<String> args) {
        try {
            return client.evalsha(sha1, keys, args);
        } catch (JedisNoScriptException e) {
            return client.eval(source, keys, args);
        }
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
