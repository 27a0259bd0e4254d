package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The article's first test: twice the limit, sent at once from 8 threads in this JVM and 4
 * threads in each of 2 other JVMs, all on one key. If anything is not atomic, more than the
 * limit get through; exactly the limit must.
 */
@ExtendWith(ValkeyExtension.class)
class ConcurrencyTest {

    private static final int LIMIT = 200;
    private static final Duration WINDOW = Duration.ofHours(1);
    /** Fixed client time: the test is about atomicity, so no refill or window edge may blur it. */
    private static final long NOW = 1_700_000_040_000L;
    private static final int PROCESSES = 2;
    private static final int THREADS_PER_PROCESS = 4;
    private static final int LOCAL_THREADS = 8;

    private final ValkeyServer valkey;

    ConcurrencyTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void twiceTheLimitFromThreadsAndProcessesLetsExactlyTheLimitThrough(Algorithm algorithm) throws Exception {
        int attempts = 2 * LIMIT;
        int perProcess = attempts / 4;                      // a quarter in each other JVM
        int local = attempts - PROCESSES * perProcess;      // half here
        long startAt = System.currentTimeMillis() + 2_500;  // time for the JVMs to start

        List<Process> processes = new ArrayList<>();
        for (int p = 0; p < PROCESSES; p++) {
            processes.add(new ProcessBuilder(javaBinary(), "-cp", System.getProperty("java.class.path"),
                    ContendingProcess.class.getName(), valkey.url(), algorithm.id(), Integer.toString(LIMIT),
                    Long.toString(WINDOW.toMillis()), Integer.toString(perProcess),
                    Integer.toString(THREADS_PER_PROCESS), Long.toString(startAt), Long.toString(NOW))
                    .redirectErrorStream(true)
                    .start());
        }

        Rule rule = Rule.of("contended", algorithm, LIMIT, WINDOW);
        int allowed;
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(2))
                        .withPoolMaxWait(Duration.ofSeconds(2)))
                .clientClock(() -> NOW)
                .build()) {
            allowed = ContendingProcess.Contention.hammer(limiter, rule, local, LOCAL_THREADS, startAt);
        }

        List<Integer> perProcessAllowed = new ArrayList<>();
        for (Process process : processes) {
            perProcessAllowed.add(allowedBy(process));
        }
        int total = allowed + perProcessAllowed.stream().mapToInt(Integer::intValue).sum();
        assertThat(total).as("allowed here %d, in the other JVMs %s", allowed, perProcessAllowed).isEqualTo(LIMIT);
    }

    private static int allowedBy(Process process) throws IOException, InterruptedException {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("a contending JVM did not finish within 60 s");
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(process.exitValue()).as("exit code of a contending JVM; its output: %s", output).isZero();
        String[] lines = output.split("\\R");
        return Integer.parseInt(lines[lines.length - 1].trim());
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
