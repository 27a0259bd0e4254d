package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A caller that always comes back at the very millisecond its retry-after names, on a bucket
 * whose emission interval is not a whole number of ms (1000 / 3) and whose state a refund has
 * touched: every allowed unit must fit the bucket exactly, {@code n} units in {@code [a, b]} at
 * most {@code burst + limit × (b − a) / window}. A retry-after rounded or worked out a fraction of a
 * ms short (a stored arrival time losing its fraction, a refill counted twice) admits a unit
 * early, which a workload of random times rarely lands on.
 */
@ExtendWith(ValkeyExtension.class)
class BucketRetryAtTheMomentTest {

    private static final long LIMIT = 3;
    private static final long WINDOW = 1_000;
    private static final long BURST = 2;
    private static final int ALLOWED = 40;
    /** How far one instance's clock is behind the other's. */
    private static final long SKEW = 40;

    private final ValkeyServer valkey;

    BucketRetryAtTheMomentTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    static Stream<Arguments> cases() {
        return Stream.of(Algorithm.GCRA, Algorithm.TOKEN_BUCKET)
                .flatMap(a -> Stream.of(Arguments.of(a, "valkey"), Arguments.of(a, "local")));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("cases")
    void aCallerBackAtEachRetryAfterIsNeverAdmittedEarly(Algorithm algorithm, String store) {
        ManualClock clock = new ManualClock(1_796_000_000_000L);
        Rule rule = Rule.of("moment-" + algorithm.id(), algorithm, LIMIT, Duration.ofMillis(WINDOW)).toBuilder().burst(BURST).build();
        try (RateLimiter limiter = store.equals("valkey") ? ClientClockLimiters.fresh(valkey, clock)
                : LocalRateLimiter.withClock(clock, 1_000)) {
            Claim claim = Claim.of(rule, "k", 1);
            List<Long> allowedAt = new ArrayList<>();
            for (int calls = 0; allowedAt.size() < ALLOWED && calls < 10 * ALLOWED; calls++) {
                // A reservation given back at once: the state carries a refund's marks from here on.
                Reservation reserved = limiter.reserveAll(List.of(claim));
                if (reserved.allowed()) {
                    reserved.cancel();
                }
                Decision decision = limiter.acquire(rule, "k", 1);
                if (decision.allowed()) {
                    allowedAt.add(clock.getAsLong());
                    clock.advance(1 + calls % 3 * 50);
                } else {
                    assertThat(decision.retryAfter()).as("a rejection names when to come back").isPositive();
                    clock.advance(decision.retryAfter().toMillis());
                }
            }
            assertThat(allowedAt).hasSize(ALLOWED);
            assertFits(allowedAt);
        }
    }

    /**
     * Two instances on one key, one's clock {@code SKEW} ms behind the other's, taken in turn by a
     * caller back at each retry-after: the state's time never goes back (a write stamps the later
     * of its own time and the state's), so the units fit the bucket on the clock ahead. A write
     * stamping the instance's own earlier time would have the next read refill that stretch again.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("algorithms")
    void twoInstancesWithClocksApartNeverRefillAStretchTwice(Algorithm algorithm) {
        ManualClock ahead = new ManualClock(1_796_000_000_000L);
        ManualClock behind = new ManualClock(1_796_000_000_000L - SKEW);
        Rule rule = Rule.of("skew-" + algorithm.id(), algorithm, LIMIT, Duration.ofMillis(WINDOW)).toBuilder().burst(BURST).build();
        try (RateLimiter first = ClientClockLimiters.fresh(valkey, ahead);
             RateLimiter second = ClientClockLimiters.unflushed(valkey, behind)) {
            List<Long> allowedAt = new ArrayList<>();
            for (int calls = 0; allowedAt.size() < ALLOWED && calls < 10 * ALLOWED; calls++) {
                RateLimiter limiter = calls % 2 == 0 ? first : second;
                Decision decision = limiter.acquire(rule, "k", 1);
                long wait = decision.allowed() ? 1 + calls % 3 * 50 : decision.retryAfter().toMillis();
                if (decision.allowed()) {
                    allowedAt.add(ahead.getAsLong());
                }
                ahead.advance(wait);
                behind.advance(wait);
            }
            assertThat(allowedAt).hasSize(ALLOWED);
            assertFits(allowedAt);
        }
    }

    static Stream<Algorithm> algorithms() {
        return Stream.of(Algorithm.GCRA, Algorithm.TOKEN_BUCKET);
    }

    /** Every run of units fits the bucket: {@code n} in {@code [a, b]} at most {@code burst + limit × (b − a) / window}. */
    private static void assertFits(List<Long> allowedAt) {
        for (int i = 0; i < allowedAt.size(); i++) {
            for (int j = i; j < allowedAt.size(); j++) {
                long units = j - i + 1;
                long span = allowedAt.get(j) - allowedAt.get(i);
                assertThat((units - BURST) * WINDOW)
                        .as("%d units allowed in [%d, %d] (%d ms), more than burst %d + %d × %d / %d", units,
                                allowedAt.get(i), allowedAt.get(j), span, BURST, LIMIT, span, WINDOW)
                        .isLessThanOrEqualTo(LIMIT * span);
            }
        }
    }
}
