package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.PausingStore;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deny cache against a real Valkey, with another thread's change of the key landing while a
 * rejection is on its way back (forced by {@link PausingStore}, not hoped for): a reset, or units
 * another request took and gave back because its other rule's local policy rejected it. Either
 * leaves room in Valkey that a remembered rejection would deny.
 */
@ExtendWith(ValkeyExtension.class)
class DenyCacheRaceValkeyTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final Rule HOURLY = Rule.of("hourly", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
    private static final Rule GUARD = Rule.of("guard", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));

    private final ValkeyServer valkey;

    DenyCacheRaceValkeyTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    /** Promise: the deny cache never turns away a request the store would allow (a reset on the way). */
    @Test
    void aRejectionOnItsWayDuringAResetIsNotRemembered() {
        ManualClock clock = new ManualClock(T0);
        ValkeyRateLimiter valkeyLimiter = ClientClockLimiters.fresh(valkey, clock);
        PausingStore store = new PausingStore(valkeyLimiter);
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build()) {
            assertThat(limiter.acquire(HOURLY, "k").allowed()).isTrue();
            store.afterNextAnswer(false, PausingStore.onOtherThread(() -> limiter.reset(HOURLY, "k")));
            assertThat(limiter.acquire(HOURLY, "k").allowed()).as("decided before the reset").isFalse();
            assertThat(valkeyLimiter.peek(HOURLY, "k", 1).allowed()).as("Valkey after the reset").isTrue();

            assertThat(limiter.acquire(HOURLY, "k").allowed()).as("not the rejection the reset made wrong").isTrue();
        }
    }

    /**
     * Promise: the deny cache never turns away a request the store would allow (units given back
     * on the way). Request B holds the last unit of "hourly" while its other rule, "guard", whose
     * Valkey state is unreadable, falls to a local policy that rejects; request A is rejected by
     * Valkey meanwhile; then B gives its unit back (all or nothing). A's rejection must not stay.
     */
    @Test
    void aRejectionDecidedOnUnitsGivenBackMeanwhileIsNotRemembered() throws Exception {
        ManualClock clock = new ManualClock(T0);
        ValkeyRateLimiter valkeyLimiter = ClientClockLimiters.fresh(valkey, clock);
        try (Jedis jedis = valkey.connect()) {
            jedis.set(valkeyLimiter.stateKey(GUARD, "k"), "not a state");
        }
        PausingStore store = new PausingStore(valkeyLimiter);
        Rule localGuard = Rule.of("guard", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock)
                .fallback(LocalRateLimiter.withClock(clock, 100))
                .policy(GUARD, FailurePolicy.local(localGuard)).build()) {
            Decision guard = limiter.acquire(GUARD, "k");
            assertThat(guard.basis()).as("unreadable in Valkey: its local policy").isEqualTo(Decision.Basis.LOCAL);
            assertThat(guard.allowed()).as("the local guard's one unit").isTrue();
            CountDownLatch bTook = new CountDownLatch(1);
            CountDownLatch aDecided = new CountDownLatch(1);
            AtomicBoolean bAllowed = new AtomicBoolean(true);
            store.afterNextAnswer(true, () -> {
                bTook.countDown();
                await(aDecided);
            });
            Thread b = new Thread(() -> bAllowed.set(limiter.acquireAll(
                    List.of(Claim.of(HOURLY, "k"), Claim.of(GUARD, "k"))).allowed()), "request-b");
            b.start();
            assertThat(bTook.await(30, TimeUnit.SECONDS)).as("B took the last unit").isTrue();
            store.afterNextAnswer(false, () -> {
                aDecided.countDown();
                try {
                    b.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(limiter.acquire(HOURLY, "k").allowed()).as("A, while B holds the unit").isFalse();
            assertThat(bAllowed.get()).as("B, rejected by the local guard").isFalse();
            assertThat(valkeyLimiter.peek(HOURLY, "k", 1).allowed()).as("Valkey after B gave back").isTrue();

            assertThat(limiter.acquire(HOURLY, "k").allowed()).as("not the rejection the give-back made wrong")
                    .isTrue();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the other request never came");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
