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
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limiter with leases keeps an account of each key it sees, and forgets a key once it has been
 * idle for longer than its lease time: keys seen once (a crawler's, 100,000 clients') must not
 * pile up, and a key kept at one scan (still in use) is forgotten at a later one.
 */
class LeaseIdleKeysTest {

    private static final Rule RULE = Rule.of("w", Algorithm.FIXED_WINDOW, 5_000, Duration.ofHours(1));
    private static final LeasePolicy POLICY = new LeasePolicy(4, Duration.ofMillis(50));

    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    private final Leases leases = new Leases(Map.of("w", POLICY), clock::get, (refunds, now) -> { });

    @AfterEach
    void close() {
        leases.close();
    }

    private static Verdicts.Answer allowed() {
        return new Verdicts.Answer(true, 4_000, 3_000_000, 0, 0, new Undo(0, 0));
    }

    /** A request of the key decided by the store, as LeaseTaker asks: served by no lease, then taken. */
    private void seen(String key) {
        Claim claim = Claim.of(RULE, key);
        assertThat(leases.serve(claim, POLICY, clock.get())).isNull();
        leases.taken(claim, 1, POLICY, 0, allowed(), clock.get());
    }

    @Test
    void keysSeenOnceAreForgottenAndAKeyKeptAtOneScanIsForgottenAtALaterOne() {
        for (int i = 0; i < 1_000; i++) {
            seen("once-" + i);
        }
        seen("busy");
        assertThat(leases.keys()).isEqualTo(1_001);
        // Past the lease time and the idle scan's period (four lease times), with "busy" seen just before.
        clock.addAndGet(250);
        seen("busy");
        leases.sweep();
        assertThat(leases.keys()).as("only the key seen within its lease time is kept").isEqualTo(1);
        clock.addAndGet(250);
        leases.sweep();
        assertThat(leases.keys()).as("the key kept at the last scan, idle since").isZero();
        seen("again");
        assertThat(leases.keys()).isEqualTo(1);
    }
}
