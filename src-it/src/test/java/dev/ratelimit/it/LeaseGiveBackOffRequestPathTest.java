package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.UndoableClaims;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease's give-back is the sweeper's business, never a request's that has nothing to give back.
 * Every allowed request of the filter ends in its reservation's commit; with leases on, that
 * commit once went through the give-back lock, and so waited for whatever give-back was on its
 * way to Valkey (with 10,000 clients, thousands of waits of 10 ms and more per second in a JFR
 * profile). Here a give-back is held up by a stalled server, and a commit must return meanwhile.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseGiveBackOffRequestPathTest {

    private final ValkeyServer valkey;

    LeaseGiveBackOffRequestPathTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void aCommitDoesNotWaitForAGiveBackOnItsWay() throws Exception {
        valkey.flushAll();
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        Rule rule = Rule.of("commit", Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(1));
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(30)))
                .clientClock(clock).localLease(rule, 8, Duration.ofMillis(400)).build()) {
            // Seen twice within the lease time: the second request takes a lease of one unit.
            assertThat(limiter.acquire(rule, "leased").allowed()).isTrue();
            assertThat(limiter.acquire(rule, "leased").allowed()).isTrue();
            Reservation request = limiter.reserveAll(UndoableClaims.of(List.of(Claim.of(rule, "other"))));
            assertThat(request.allowed()).isTrue();

            CompletableFuture<Void> stall = Stalls.begin(valkey, Duration.ofSeconds(8));
            clock.advance(1_000); // the lease's time is over: the sweeper gives its unit back, into the stall
            awaitSweeperGivingBack();

            request.commit();
            assertThat(stall).as("the commit returned only once the stalled give-back had landed").isNotDone();
            assertThat(sweeperGivingBack()).as("the give-back is still on its way").isTrue();
            stall.get();
        }
    }

    /**
     * docs/local-leases.md, "Headers and decisions": with one instance, remaining is what
     * remains. The request that runs its key's lease out gives the lease's margin back as it
     * commits, on its own thread, so that the key's next answer counts it: no allowed request may
     * say 0 left while more are admitted after it (left to the sweeper, the next request often
     * reached Valkey first), whether it commits as reserved or by its actual cost.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void theRequestThatRanALeaseOutGivesItsMarginBackBeforeTheNextAnswer(boolean byActualCost) throws Exception {
        valkey.flushAll();
        Rule rule = Rule.tokenBucket("margin", 10, Duration.ofSeconds(1), 20);
        long frozen = 1_796_700_000_000L;
        for (int run = 0; run < 10; run++) {
            String key = "k" + run;
            try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                    .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                    .clientClock(() -> frozen).localLease(rule, 4, Duration.ofMillis(100)).build()) {
                List<Long> remaining = new java.util.ArrayList<>();
                for (int i = 0; i < 22; i++) {
                    Reservation request = limiter.reserveAll(UndoableClaims.of(List.of(Claim.of(rule, key))));
                    if (request.allowed()) {
                        remaining.add(request.decisions().get(0).remaining());
                        if (byActualCost) {
                            request.commit(1L);
                        } else {
                            request.commit();
                        }
                    }
                }
                assertThat(remaining).as("run %d", run).hasSize(20);
                assertThat(remaining.subList(0, remaining.size() - 1)).as("run %d: 0 left, then more admitted", run)
                        .doesNotContain(0L);
            }
        }
    }

    /**
     * A request that ran its own key's lease out gives it back as it commits, but behind another
     * key's give-back held up by a stalled server it waits no longer than its lease's time.
     */
    @Test
    void aCommitGivingBackItsOwnLeaseWaitsForAnotherKeysNoLongerThanItsLeaseTime() throws Exception {
        valkey.flushAll();
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        Rule other = Rule.of("other", Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(1));
        // A burst above the refill of its 2 s lease time (the lease's margin), or no lease is taken.
        Rule own = Rule.of("own", Algorithm.TOKEN_BUCKET, 1000, Duration.ofSeconds(10));
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(30)))
                .clientClock(clock).localLease(other, 8, Duration.ofMillis(400))
                .localLease(own, 8, Duration.ofSeconds(2)).build()) {
            for (Rule rule : List.of(other, own)) {
                // Seen twice: a lease of one unit.
                assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
                assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
            }
            CompletableFuture<Void> stall = Stalls.begin(valkey, Duration.ofSeconds(10));
            clock.advance(1_200); // other's lease is over (its give-back goes into the stall); own's is not
            awaitSweeperGivingBack();

            Reservation request = limiter.reserveAll(UndoableClaims.of(List.of(Claim.of(own, "k"))));
            assertThat(stall).as("the request was served by its lease, with no call").isNotDone();
            assertThat(request.allowed()).isTrue();
            request.commit(); // ran own's lease out: gives it back, or leaves it to the sweeper after 2 s
            assertThat(stall).as("the commit waited for the other key's stalled give-back").isNotDone();
            stall.get();
        }
    }

    private static void awaitSweeperGivingBack() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        while (!sweeperGivingBack()) {
            assertThat(System.nanoTime() - deadline).as("the sweeper never began the give-back").isNegative();
            Thread.sleep(5);
        }
    }

    /** Whether the lease sweeper's thread is inside a give-back's call to the store. */
    private static boolean sweeperGivingBack() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(each -> each.getKey().getName().equals("ratelimit-lease-sweeper"))
                .anyMatch(each -> Arrays.stream(each.getValue()).anyMatch(frame ->
                        frame.getClassName().endsWith(".LeaseReturner") && frame.getMethodName().equals("giveBack")));
    }
}
