package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README, "Local leases": what a lease did not use goes back "exactly", charged only the refill
 * the bucket without it would have lost; one instance is not held below what it would have
 * without leases once its leases are over.
 *
 * <p>A give-back is worked out at one reading of the lease clock and sent at that same time. Were
 * the refund call to read the clock again (a thread held up in between by a GC pause or a busy
 * machine: here the sweeper's reading is held while the key's requests go on, served from the
 * lease taken ahead), the store would charge the refill of the whole delay as lost although this
 * instance's requests meanwhile kept its own bucket from being full, and later give-backs would
 * charge that stretch again. One instance, a key asked at half its rate: after close, the key
 * holds what the same traffic leaves on a key without leases.
 */
@ExtendWith(ValkeyExtension.class)
class LeaseLateGiveBackTest {

    private final ValkeyServer valkey;
    private final ManualClock base = new ManualClock(1_700_000_000_000L);

    LeaseLateGiveBackTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /**
     * The limiter's clock: when armed, the lease sweeper's next read of it returns only when the
     * test lets it go, the time it read then being the time before the wait.
     */
    static final class SlowSweeperClock implements LongSupplier {
        private final ManualClock base;
        private volatile boolean armed;
        private int reads;
        final Semaphore held = new Semaphore(0);
        final Semaphore go = new Semaphore(0);

        SlowSweeperClock(ManualClock base) {
            this.base = base;
        }

        synchronized void arm() {
            reads = 0;
            armed = true;
        }

        void disarm() {
            armed = false;
            go.release(100);
        }

        @Override
        public long getAsLong() {
            if (armed && Thread.currentThread().getName().equals("ratelimit-lease-sweeper")) {
                boolean hold;
                synchronized (this) {
                    hold = armed && ++reads >= 1;
                    if (hold) {
                        armed = false;
                    }
                }
                if (hold) {
                    long read = base.getAsLong();
                    held.release();
                    go.acquireUninterruptibly();
                    return read;
                }
            }
            return base.getAsLong();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aLateGiveBackChargesNoMoreThanTheRefillLost(Algorithm algorithm) throws Exception {
        // 10 a second, a burst of 40; leases of 16 for 400 ms (margin 4); one request every 200 ms.
        Rule rule = Rule.of("b", algorithm, 10, Duration.ofSeconds(1)).toBuilder().burst(40).build();
        SlowSweeperClock clock = new SlowSweeperClock(base);
        long leased = 0;
        long plain = 0;
        int held = 0;
        try (ValkeyRateLimiter withLeases = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                .clientClock(clock).localLease(rule, 16, Duration.ofMillis(400)).build();
             ValkeyRateLimiter without = ValkeyRateLimiter.builder()
                     .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5)))
                     .clientClock(base).build()) {
            int holding = -1;
            for (int i = 0; i < 50; i++) {
                if (i % 10 == 5 && holding < 0) {
                    clock.arm();
                }
                leased += withLeases.acquire(rule, "l").allowed() ? 1 : 0;
                plain += without.acquire(rule, "p").allowed() ? 1 : 0;
                if (holding < 0 && clock.held.tryAcquire(20, TimeUnit.MILLISECONDS)) {
                    // A give-back was worked out and its call is held up: three more requests meanwhile.
                    holding = 3;
                    held++;
                } else if (holding < 0) {
                    Thread.sleep(5); // give-backs land before the clock moves on
                }
                base.advance(200);
                if (holding == 0) {
                    clock.go.release();
                    Thread.sleep(30);
                }
                holding = Math.max(-1, holding - 1);
            }
            clock.disarm();
        }
        Thread.sleep(30);
        try (ValkeyRateLimiter fresh = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).clientClock(base).build()) {
            long l = fresh.peek(rule, "l", 1).remaining();
            long p = fresh.peek(rule, "p", 1).remaining();
            System.out.println("LeaseLateGiveBackTest " + algorithm + ": " + held + " give-backs held up; admitted "
                    + leased + " with leases, " + plain + " without; after close " + l + " vs " + p);
            assertThat(held).as("give-backs held up").isPositive();
            assertThat(leased).isEqualTo(plain).isEqualTo(50);
            assertThat(l).as("the leased key after close, against the same traffic without leases").isEqualTo(p);
        }
    }
}
