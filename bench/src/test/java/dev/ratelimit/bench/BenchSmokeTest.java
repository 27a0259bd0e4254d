package dev.ratelimit.bench;

import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The benchmark runs end to end on a tiny load; its numbers are not judged, its exactness is. */
class BenchSmokeTest {

    @Test
    void theBenchmarkRunsAndEveryLimiterIsExactUnderContention() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.provide()) {
            List<Bench.Result> results = Bench.throughput(valkey, 400, List.of(1, 4));
            assertThat(results).hasSize(24).allSatisfy(r -> {
                assertThat(r.opsPerSecond()).isPositive();
                assertThat(r.p99Micros()).isGreaterThanOrEqualTo(r.p50Micros());
                assertThat(r.allowed()).as(r.contender()).isEqualTo(400);
            });
            assertThat(Bench.rules(valkey, 400, List.of(4))).hasSize(2)
                    .allSatisfy(r -> assertThat(r.allowed()).as(r.contender()).isEqualTo(400));
            assertThat(Bench.exactness(valkey, 8)).hasSize(4)
                    .allSatisfy(r -> assertThat(r.allowed()).as(r.contender()).isEqualTo(100));
        }
    }
}
