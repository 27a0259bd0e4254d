package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A quota survives a restart of a Valkey with {@code appendonly yes} and {@code appendfsync
 * everysec}: counts taken, more than a second for the file to be written, the process killed
 * ({@code SIGKILL}, no shutdown save) and started again on the same directory, and the counts are
 * back, for a calendar month and a token bucket alike. Without persistence the same restart
 * forgets them (the control that makes the test able to fail).
 */
class RestartPersistenceTest {

    private static final Rule MONTHLY = Rule.of("monthly", Algorithm.FIXED_WINDOW, 10_000, Duration.ofDays(1))
            .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.MONTH, ZoneId.of("Europe/Berlin"))).build();
    private static final Rule HOURLY_BUCKET = Rule.of("bucket", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));

    private static ValkeyRateLimiter limiter(ValkeyServer valkey) {
        return ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).build();
    }

    /** Takes 7 units of each rule, then kills and restarts the server; the units remaining after one more. */
    private static long[] remainingAfterRestart(ValkeyServer valkey) throws InterruptedException {
        try (ValkeyRateLimiter limiter = limiter(valkey)) {
            for (int i = 0; i < 7; i++) {
                assertThat(limiter.acquire(MONTHLY, "user-1").allowed()).isTrue();
                assertThat(limiter.acquire(HOURLY_BUCKET, "user-1").allowed()).isTrue();
            }
        }
        // everysec writes the file at least once a second: wait well past it, busy machine or not.
        Thread.sleep(2_500);
        valkey.restart();
        try (ValkeyRateLimiter limiter = limiter(valkey)) {
            Decision monthly = limiter.acquire(MONTHLY, "user-1");
            Decision bucket = limiter.acquire(HOURLY_BUCKET, "user-1");
            return new long[] {monthly.remaining(), bucket.remaining()};
        }
    }

    @Test
    void theCountsAreBackAfterAKillWithAnAppendOnlyFile() throws Exception {
        Path dir = Files.createTempDirectory("valkey-aof");
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of("--appendonly", "yes", "--appendfsync", "everysec",
                "--dir", dir.toString()))) {
            long[] remaining = remainingAfterRestart(valkey);
            assertThat(remaining[0]).as("the month's count: 8 taken").isEqualTo(10_000 - 8);
            // The bucket refills at 100 an hour: at most a unit or two came back in the seconds between.
            assertThat(remaining[1]).as("the bucket's tokens").isBetween(100L - 8, 100L - 8 + 2);
        }
    }

    @Test
    void withoutPersistenceTheSameRestartForgetsThem() throws Exception {
        Path dir = Files.createTempDirectory("valkey-none");
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of("--dir", dir.toString()))) {
            long[] remaining = remainingAfterRestart(valkey);
            assertThat(remaining[0]).as("a fresh month").isEqualTo(10_000 - 1);
            assertThat(remaining[1]).as("a full bucket").isEqualTo(100 - 1);
        }
    }
}
