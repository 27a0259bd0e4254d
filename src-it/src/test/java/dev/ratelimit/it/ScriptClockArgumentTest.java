package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The script's time argument (dispatcher.lua's ARGV[1]), sent raw: the text {@code -1} asks for
 * the server's clock, a number is the caller's clock, and anything else fails the call and
 * writes nothing, rather than being taken for either.
 */
@ExtendWith(ValkeyExtension.class)
class ScriptClockArgumentTest {

    private final ValkeyServer valkey;

    ScriptClockArgumentTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void onlyMinusOneReadsTheServersClockAndTextThatIsNoNumberFailsTheCall() {
        Rule rule = Rule.of("clock", Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(1));
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())).build();
             Jedis jedis = valkey.connect()) {
            limiter.acquire(rule, "load"); // loads the library
            String function = valkey.limiterFunction();
            List<String> tokenBucket = List.of("token-bucket", "5", "1000", "5", "1", "0", "0", "0", "0");

            for (String time : List.of("abc", "", "now")) {
                assertThatThrownBy(() -> jedis.fcall(function, List.of("k"), args(time, tokenBucket)))
                        .as("time argument '%s'", time).isInstanceOf(JedisDataException.class);
                assertThat(jedis.exists("k")).as("written after time argument '%s'", time).isFalse();
            }

            // The server's clock: the state is stamped with the server's ms, within a few seconds of this one.
            jedis.fcall(function, List.of("server"), args("-1", tokenBucket));
            long stamped = Long.parseLong(jedis.get("server").split(":")[1]);
            assertThat(stamped).isBetween(System.currentTimeMillis() - 5_000, System.currentTimeMillis() + 5_000);

            // The caller's clock: stamped with the ms it sent.
            jedis.fcall(function, List.of("client"), args("1000000000000", tokenBucket));
            assertThat(jedis.get("client").split(":")[1]).isEqualTo("1000000000000");
        }
    }

    private static List<String> args(String time, List<String> rule) {
        List<String> args = new ArrayList<>(List.of(time, "1", "7"));
        args.addAll(rule);
        return args;
    }
}
