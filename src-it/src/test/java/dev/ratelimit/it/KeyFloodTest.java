package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.args.FlushMode;
import redis.clients.jedis.Response;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 100,000 distinct client addresses, one request each: one key each, every key with a TTL,
 * and Valkey's memory within a per-key budget.
 */
@ExtendWith(ValkeyExtension.class)
class KeyFloodTest {

    private static final int CLIENTS = 100_000;
    private static boolean serverWarmed;

    private final ValkeyServer valkey;

    KeyFloodTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @ParameterizedTest
    @CsvSource({
            // algorithm, the most bytes of Valkey memory per client key
            "GCRA, 250",
            "TOKEN_BUCKET, 250",
            "FIXED_WINDOW, 250",
            "SLIDING_WINDOW_COUNTER, 250",
            "SLIDING_LOG, 250"
    })
    void distinctClientsCostOneSmallExpiringKeyEach(Algorithm algorithm, long maxBytesPerKey) throws Exception {
        // The client clock stands in the middle of an aligned window: on the wall clock a fixed
        // window's keys expired in the middle of a flood that crossed a 10-minute boundary
        // (87,179 keys of 100,000 in one CI run).
        ManualClock clock = new ManualClock(1_700_000_400_000L + 300_000);
        Rule rule = Rule.of("flood", algorithm, 5, Duration.ofMinutes(10));
        if (!serverWarmed) {
            // A server's first flood grows structures it keeps (measured: about 100 bytes a key
            // more, whichever algorithm comes first); the budget is for a server that has run.
            try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(valkey.url())
                    .withSocketTimeout(Duration.ofSeconds(2)).withPoolMaxWait(Duration.ofSeconds(2))).clientClock(clock)
                    .build()) {
                flood(limiter, Rule.of("warm-up", algorithm, 5, Duration.ofMinutes(10)), 0, CLIENTS);
            }
            serverWarmed = true;
        }
        try (Jedis admin = valkey.connect()) {
            admin.flushAll(FlushMode.SYNC); // an asynchronous flush would still hold memory when measured
        }
        long half;
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2))
                        .withPoolMaxWait(Duration.ofSeconds(2)))
                .clientClock(clock)
                .build()) {
            // The cost per key is what the second half of the flood adds: what a server pays once
            // (the library, its first connections, buffers) falls in the first half.
            flood(limiter, rule, 0, CLIENTS / 2);
            half = usedMemory();
            flood(limiter, rule, CLIENTS / 2, CLIENTS);
        }
        long perKey = (usedMemory() - half) / (CLIENTS - CLIENTS / 2);
        System.out.printf("key flood: %s uses %d bytes of Valkey memory per client key%n", algorithm.id(), perKey);

        try (Jedis inspect = valkey.connect()) {
            assertThat(inspect.dbSize()).isEqualTo(CLIENTS);
            long withoutTtl = 0;
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = inspect.scan(cursor, new ScanParams().count(5_000));
                Pipeline pipeline = inspect.pipelined();
                List<Response<Long>> ttls = new ArrayList<>();
                for (String key : page.getResult()) {
                    ttls.add(pipeline.pttl(key));
                }
                pipeline.sync();
                for (Response<Long> ttl : ttls) {
                    if (ttl.get() <= 0 || ttl.get() > Duration.ofMinutes(20).toMillis()) {
                        withoutTtl++;
                    }
                }
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            assertThat(withoutTtl).as("keys without a TTL no longer than the state needs").isZero();
        }
        assertThat(perKey).as("bytes per client key").isLessThanOrEqualTo(maxBytesPerKey);
    }

    private static void flood(ValkeyRateLimiter limiter, Rule rule, int from, int to) throws InterruptedException {
        AtomicInteger next = new AtomicInteger(from);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread thread = new Thread(() -> {
                for (int i = next.getAndIncrement(); i < to; i = next.getAndIncrement()) {
                    limiter.acquire(rule, "ip:10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255));
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
    }

    private long usedMemory() {
        try (Jedis inspect = valkey.connect()) {
            Matcher m = Pattern.compile("used_memory:(\\d+)").matcher(inspect.info("memory"));
            assertThat(m.find()).isTrue();
            return Long.parseLong(m.group(1));
        }
    }
}
