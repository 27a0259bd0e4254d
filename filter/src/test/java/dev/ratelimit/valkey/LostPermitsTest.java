package dev.ratelimit.valkey;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** What is remembered of lost permits, how often it is tried, and when it is let go. */
class LostLeasesTest {

    private static final Rule LEASES = Rule.of("permits", Algorithm.CONCURRENCY, 3, Duration.ofSeconds(10));
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final LostPermits lost = new LostPermits(nanos::get);

    private void advanceMillis(long millis) {
        nanos.addAndGet(millis * 1_000_000L);
    }

    @Test
    void onlyConcurrencyClaimsHoldLeases() {
        lost.remember(Claim.of(Rule.of("window", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(10)), "k"), 7);
        assertThat(lost.size()).isZero();
        lost.remember(Claim.of(LEASES, "k"), 7);
        assertThat(lost.due()).extracting(LostPermits.Permit::call).containsExactly(7L);
        assertThat(lost.size()).as("taken out to be released").isZero();
    }

    @Test
    void releasesAreTriedAtMostEveryHundredMillisecondsAndFiveTimes() {
        lost.remember(Claim.of(LEASES, "k"), 7);
        int tries = 0;
        for (int step = 0; step < 50; step++) {
            List<LostPermits.Permit> due = lost.due();
            if (!due.isEmpty()) {
                tries++;
                lost.tried(due, new boolean[] {false});
            }
            assertThat(lost.due()).as("not again within 100 ms").isEmpty();
            advanceMillis(LostPermits.PAUSE_MILLIS);
        }
        assertThat(tries).isEqualTo(LostPermits.ATTEMPTS);
        assertThat(lost.size()).isZero();
    }

    @Test
    void aReleasedLeaseIsForgottenAndAFailedReleaseIsNoTry() {
        lost.remember(Claim.of(LEASES, "a"), 1);
        lost.remember(Claim.of(LEASES, "b"), 2);
        List<LostPermits.Permit> due = lost.due();
        lost.tried(due, new boolean[] {true, false});
        assertThat(lost.size()).as("b only").isEqualTo(1);
        for (int i = 0; i < 20; i++) {
            advanceMillis(LostPermits.PAUSE_MILLIS);
            lost.tried(lost.due(), null);
        }
        assertThat(lost.size()).as("Valkey never answered: still worth trying").isEqualTo(1);
    }

    @Test
    void nothingIsTriedPastItsLeaseTimeout() {
        lost.remember(Claim.of(LEASES, "k"), 7);
        advanceMillis(LEASES.window().toMillis());
        assertThat(lost.due()).isEmpty();
        assertThat(lost.size()).isZero();
    }

    @Test
    void theOldestIsForgottenPastTheBound() {
        for (int i = 0; i <= LostPermits.MAX_PERMITS; i++) {
            lost.remember(Claim.of(LEASES, "k"), i + 1);
        }
        assertThat(lost.size()).isEqualTo(LostPermits.MAX_PERMITS);
        assertThat(lost.due().get(0).call()).isEqualTo(2L);
    }
}
