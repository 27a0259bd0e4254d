package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One instance withholds at most a lease's size of a key (README, "Local leases"), however its
 * threads interleave: a request that found the key's lease empty, and no call on its way for a
 * new one, asks for none once another thread's call has installed one meanwhile. Asked for, it
 * went beside that lease (or replaced it and the one taken ahead, whose give-back then waited
 * for the key's calls): LeaseWithheldTest, 8 threads on one key, saw up to twice the size
 * withheld when this happened near the end of its run.
 */
class LeaseOneAtATimeTest {

    private static final Rule RULE = Rule.of("w", Algorithm.FIXED_WINDOW, 5_000, Duration.ofHours(1));
    private static final LeasePolicy POLICY = new LeasePolicy(2, Duration.ofSeconds(20));
    private static final Claim CLAIM = Claim.of(RULE, "k");
    private static final long NOW = 1_700_000_000_000L;

    private final Leases leases = new Leases(Map.of("w", POLICY), () -> NOW, (refunds, now) -> { });

    @AfterEach
    void close() {
        leases.close();
    }

    private static Verdicts.Answer allowed() {
        return new Verdicts.Answer(true, 4_000, 3_000_000, 0, 0, new Undo(0, 0));
    }

    @Test
    void aRequestThatFoundNoLeaseAsksForNoneOnceAnotherThreadsLeaseIsInstalled() {
        // The key seen once: no lease yet, but the next request asks for one.
        assertThat(leases.serve(CLAIM, POLICY, NOW)).isNull();
        assertThat(leases.extra(CLAIM, POLICY, NOW)).isZero();

        // Two threads find the key's lease empty, with no call on its way.
        assertThat(leases.serve(CLAIM, POLICY, NOW)).as("thread A").isNull();
        assertThat(leases.serve(CLAIM, POLICY, NOW)).as("thread B").isNull();
        // B asks for a lease, and its call lands before A gets to ask.
        long b = leases.extra(CLAIM, POLICY, NOW);
        assertThat(b).isPositive();
        assertThat(leases.taken(CLAIM, 1, POLICY, b, allowed(), NOW).lease()).isNotNull();
        leases.settled(CLAIM);
        long held = leases.held(RULE, "k");
        assertThat(held).isPositive();

        long a = leases.extra(CLAIM, POLICY, NOW);
        if (a > 0) {
            leases.taken(CLAIM, 1, POLICY, a, allowed(), NOW);
            leases.settled(CLAIM);
        }
        assertThat(a).as("units A asks beside its own").isZero();
        assertThat(leases.held(RULE, "k")).isEqualTo(held).isLessThanOrEqualTo(POLICY.size());
    }
}
