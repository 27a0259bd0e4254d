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
     * say 0 left while more are admitted after it. (Left to the sweeper, the next request often
     * reached Valkey first.)
     */
    @Test
    void theRequestThatRanALeaseOutGivesItsMarginBackBeforeTheNextAnswer() throws Exception {
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
                        request.commit();
                    }
                }
                assertThat(remaining).as("run %d", run).hasSize(20);
                assertThat(remaining.subList(0, remaining.size() - 1)).as("run %d: 0 left, then more admitted", run)
                        .doesNotContain(0L);
            }
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
