package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.script.StoreOutcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request the store refused stays refused, whatever its rules' own answers say. On a cluster a
 * request whose keys lie in several slot groups is first read in each group; when one refuses,
 * the groups are read again and their answers kept, and by then every rule may allow (on the
 * server clock time passes between the two reads: a sliding log's unit may have left its
 * window). The store's outcome is then refused although each answer allows and none took
 * anything. A request with a leasing rule went through the leases' account of it, which
 * combined those answers afresh and answered it allowed: units admitted that no state counted
 * (the checker's long runs on the cluster on the server clock, seed 41100 on CLUSTER_RESILIENT).
 */
class LeaseRejectedElsewhereTest {

    private static final Rule LEASING = Rule.of("w", Algorithm.TOKEN_BUCKET, 10, Duration.ofMillis(20));
    private static final Rule OTHER = Rule.of("s", Algorithm.SLIDING_LOG, 2, Duration.ofMillis(20));
    private static final LeasePolicy POLICY = new LeasePolicy(1, Duration.ofMillis(50));
    private static final long NOW = 1_700_000_000_000L;

    private final Leases leases = new Leases(Map.of("w", POLICY), () -> NOW, (refunds, now) -> { });

    @AfterEach
    void close() {
        leases.close();
    }

    @Test
    void aRequestTheStoreRefusedIsRefusedThoughEachOfItsRulesAllowsByThen() {
        LeaseTaker taker = new LeaseTaker(leases, (claims, lending) -> {
            // What the slot groups answer then: every rule allows by the second read, taking nothing.
            List<Verdicts.Answer> answers = claims.stream()
                    .map(claim -> new Verdicts.Answer(true, 1, 0, 0, 0)).toList();
            return new StoreOutcome(Verdicts.combine(claims, answers, true), answers);
        }, RateLimitListener.NONE);

        Decisions decisions = taker.take(List.of(Claim.of(OTHER, "c"), Claim.of(LEASING, "c"))).decisions();

        assertThat(decisions.allowed()).isFalse();
        assertThat(decisions.retryAfter()).isPositive();
        assertThat(leases.held(LEASING, "c")).isZero();
    }
}
