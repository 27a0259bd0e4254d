package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Decision;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real period end on the server's clock: a day in a zone whose offset (to the second) puts
 * its midnight a few seconds after Valkey's now. Threads hammer the key through the end; each
 * allowed unit says by its reset which day counted it. Neither day grants more than its limit,
 * the new day is not locked out by the old one, and a reservation of the old day cancelled in
 * the new one gives nothing back. Nothing depends on how fast the machine is: the threads go
 * on until the new day has answered a rejection, and each unit's day is read from its answer.
 */
@ExtendWith(ValkeyExtension.class)
class CalendarPeriodEndServerClockTest {

    private static final long LIMIT = 40;
    private static final long DAY = 86_400_000L;

    private final ValkeyServer valkey;

    CalendarPeriodEndServerClockTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Valkey's now, in ms. */
    private static long serverNow(Jedis jedis) {
        List<String> time = jedis.time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }

    /** A zone whose local midnight is at {@code end} (a whole second): an offset within ±18 h. */
    private static ZoneOffset midnightAt(long end) {
        long offset = Math.floorMod(-end, DAY) / 1000;
        if (offset > 18 * 3600) {
            offset -= 24 * 3600;
        }
        return ZoneOffset.ofTotalSeconds((int) offset);
    }

    @Test
    void threadsHammeringThroughTheServersMidnightGetEachDaysLimitExactly() throws Exception {
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).build();
             Jedis jedis = valkey.connect()) {
            long end = (serverNow(jedis) / 1000 + 6) * 1000;
            Rule rule = Rule.of("daily", Algorithm.FIXED_WINDOW, LIMIT, Duration.ofDays(1))
                    .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.DAY, midnightAt(end))).build();
            Reservation old = limiter.reserve(rule, "reserved", 2);
            assertThat(old.allowed()).isTrue();
            assertThat(old.decisions().all().get(0).resetAfter()).as("taken in the old day")
                    .isLessThan(Duration.ofHours(1));

            // The hammering starts a second before the midnight: enough to fill the old day, and
            // no longer a load on a shared machine than it needs to be.
            while (serverNow(jedis) < end - 1_000) {
                Thread.sleep(20);
            }
            AtomicLong oldDay = new AtomicLong();
            AtomicLong newDay = new AtomicLong();
            AtomicLong lockedOut = new AtomicLong();
            AtomicLong newDayRejected = new AtomicLong();
            long deadline = System.currentTimeMillis() + 60_000;
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                done.add(pool.submit(() -> {
                    while (newDayRejected.get() == 0 && System.currentTimeMillis() < deadline) {
                        Decision d = limiter.acquire(rule, "k");
                        boolean inNewDay = d.allowed() ? d.resetAfter().compareTo(Duration.ofHours(1)) > 0
                                : d.retryAfter().compareTo(Duration.ofHours(1)) > 0;
                        if (d.allowed()) {
                            (inNewDay ? newDay : oldDay).incrementAndGet();
                        } else if (inNewDay) {
                            newDayRejected.incrementAndGet();
                            if (d.remaining() > 0) {
                                lockedOut.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
            assertThat(newDayRejected.get()).as("the new day was reached and filled within a minute").isPositive();
            assertThat(oldDay.get()).as("the old day's grants").isLessThanOrEqualTo(LIMIT);
            assertThat(newDay.get()).as("the new day's grants: its limit, no more, no less").isEqualTo(LIMIT);
            assertThat(lockedOut.get()).as("rejections in the new day with units left").isZero();
            assertThat(jedis.get(limiter.stateKey(rule, "k"))).startsWith((end + DAY) + ":" + LIMIT + ":");

            // The old day's reservation, cancelled in the new day: nothing lands there.
            assertThat(serverNow(jedis)).isGreaterThanOrEqualTo(end);
            assertThat(limiter.acquire(rule, "reserved").allowed()).isTrue();
            assertThat(old.cancel()).as("the old day has ended: nothing to give back").isEmpty();
            assertThat(limiter.peek(rule, "reserved", 1).remaining()).isEqualTo(LIMIT - 1);
        }
    }
    /**
     * Keys with room called back to back by two threads from 3 ms before each of three midnights
     * a second apart (three zones) until the new day has counted a few: some call runs at the very
     * ms a day starts, and must count in the new day. A period taken to include its end would
     * write a unit that expires at once (Valkey refuses it): only a call at that very ms shows it,
     * which the checker's runs never send.
     */
    @Test
    void aCallAtTheVeryMillisecondADayStartsCountsInTheNewDay() throws Exception {
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(Duration.ofSeconds(5))).build();
             Jedis jedis = valkey.connect()) {
            long first = (serverNow(jedis) / 1000 + 2) * 1000;
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                for (long end = first; end < first + 3_000; end += 1_000) {
                    Rule rule = Rule.of("edge-" + (end - first), Algorithm.FIXED_WINDOW, LIMIT, Duration.ofDays(1))
                            .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.DAY, midnightAt(end))).build();
                    AtomicLong oldDay = new AtomicLong();
                    AtomicLong newDay = new AtomicLong();
                    long midnight = end;
                    long deadline = System.currentTimeMillis() + 30_000;
                    List<Future<?>> done = new ArrayList<>();
                    for (int t = 0; t < 2; t++) {
                        done.add(pool.submit(() -> {
                            try (Jedis clock = valkey.connect()) {
                                while (serverNow(clock) < midnight - 3 && System.currentTimeMillis() < deadline) {
                                    Thread.onSpinWait();
                                }
                            }
                            while (newDay.get() < 3 && System.currentTimeMillis() < deadline) {
                                Decision d = limiter.acquire(rule, "edge");
                                if (d.allowed()) {
                                    (d.resetAfter().compareTo(Duration.ofHours(1)) > 0 ? newDay : oldDay).incrementAndGet();
                                }
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : done) {
                        f.get();
                    }
                    assertThat(oldDay.get()).as("calls counted in the old day").isLessThanOrEqualTo(LIMIT);
                    assertThat(newDay.get()).as("calls counted in the new day").isBetween(3L, LIMIT);
                }
            } finally {
                pool.shutdown();
            }
        }
    }
}
