package dev.ratelimit.it;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit top} over many keys keeps only the nearest in memory: what it holds grows with
 * {@code --limit}, not with {@code --max-keys}, so a large rule on a small operator's machine is
 * scanned to its end instead of failing with an {@code OutOfMemoryError}'s stack trace.
 */
@ExtendWith(ValkeyExtension.class)
class CliTopMemoryTest {

    /** More keys than a heap of {@link #HEAP} holds the decisions of (about 250 bytes each). */
    private static final int KEYS = 200_000;
    private static final String HEAP = "-Xmx32m";

    /**
     * Writes fixed-window states as the limiter writes them ({@code <end>:<count>:<gen>}, ending
     * with the current hour), counts 1 to 5 of a limit of 5, in one call: the limiter itself
     * would take minutes to make this many.
     */
    private static final String WRITE = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ends = now - now % 3600000 + 3600000
            for i = 1, tonumber(ARGV[1]) do
              redis.call('SET', 'rl:v1:many:fixed-window:{header.x-t:k' .. i .. '}',
                  ends .. ':' .. (i % 5 + 1) .. ':' .. i, 'PX', ends - now)
            end
            return ends
            """;

    private final ValkeyServer valkey;

    @TempDir
    Path dir;

    CliTopMemoryTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void topOverManyKeysHoldsOnlyTheNearestInMemory() throws Exception {
        valkey.flushAll();
        try (Jedis jedis = valkey.connect()) {
            jedis.eval(WRITE, List.of(), List.of(String.valueOf(KEYS)));
        }
        Path file = dir.resolve("microprofile-config.properties");
        Files.writeString(file, String.join("\n", "ratelimit.valkey.url=" + valkey.url(), "ratelimit.rules=many",
                "ratelimit.rule.many.match=/*", "ratelimit.rule.many.algorithm=fixed-window",
                "ratelimit.rule.many.limit=5", "ratelimit.rule.many.window=1h", "ratelimit.rule.many.key=header:X-T", ""));

        CliProcess.Run run = CliProcess.run(dir, Map.of(), List.of(HEAP), "top", "--json", "--limit", "3",
                "--max-keys", "1000000", "--max-seconds", "120", "-s", file.toString(), "many");

        String end = run.err().substring(Math.max(0, run.err().length() - 400)); // the progress lines before it are long
        assertThat(run.err().contains("OutOfMemoryError") || run.err().contains("\tat ")).as(end).isFalse();
        assertThat(run.status()).as(end).isZero();
        JsonObject json = JsonParser.parseString(run.out()).getAsJsonObject();
        assertThat(json.get("keysSeen").getAsInt()).isEqualTo(KEYS);
        assertThat(json.get("complete").getAsBoolean()).isTrue();
        assertThat(json.getAsJsonArray("nearest")).hasSize(3).allSatisfy(e ->
                assertThat(e.getAsJsonObject().get("remaining").getAsLong()).isZero());
    }
}
