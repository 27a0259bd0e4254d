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
            List<Bench.Result> results = Bench.run(valkey, 400, 4);
            assertThat(results).hasSize(9);
            assertThat(results).filteredOn(r -> !r.scenario().startsWith("4x"))
                    .allSatisfy(r -> {
                        assertThat(r.opsPerSecond()).isPositive();
                        assertThat(r.allowed()).isEqualTo(400);
                    });
            assertThat(results).filteredOn(r -> r.scenario().startsWith("4x"))
                    .hasSize(3).allSatisfy(r -> assertThat(r.allowed()).as(r.contender()).isEqualTo(100));
        }
    }
}
