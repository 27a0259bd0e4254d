package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refund on a state of the form before generations (written by the previous version): the
 * reservation taken on it gives back its own unit, never one of the units the old state held,
 * and a reset in between leaves nothing to give back to units taken since.
 */
@ExtendWith(ValkeyExtension.class)
class LegacyStateRefundTest {

    private static final long T0 = 1_700_000_040_000L;
    private static final Duration WINDOW = Duration.ofSeconds(10);

    private final ValkeyServer valkey;
    private ManualClock clock;
    private ValkeyRateLimiter limiter;

    LegacyStateRefundTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void setUp() {
        clock = new ManualClock(T0 + 3_000);
        limiter = ClientClockLimiters.fresh(valkey, clock);
    }

    @AfterEach
    void tearDown() {
        limiter.close();
    }

    /** Two units of three taken, in each algorithm's form of before. */
    private void legacy(Rule rule, String key) {
        long now = clock.getAsLong();
        String value = switch (rule.algorithm()) {
            case FIXED_WINDOW -> (T0 + 10_000) + ":2";
            case SLIDING_WINDOW_COUNTER -> T0 + ":" + (T0 + 1_000) + ":2:0:" + (T0 + 20_000);
            case TOKEN_BUCKET -> "20000:" + now + ":10000:3";
            default -> (now + 6_666) + ":2:" + now + ":10000:3";
        };
        try (Jedis jedis = valkey.connect()) {
            jedis.set(limiter.stateKey(rule, key), value);
        }
    }

    /** Promise: a refund gives back only units that are still the reservation's (an old-form state). */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "TOKEN_BUCKET", "GCRA"})
    void aReservationOnAnOldFormStateGivesBackItsOwnUnitOnly(Algorithm algorithm) {
        Rule rule = Rule.of("legacy", algorithm, 3, WINDOW);
        legacy(rule, "k");
        Reservation mine = limiter.reserve(rule, "k");
        assertThat(mine.allowed()).isTrue();
        assertThat(limiter.peek(rule, "k", 1).allowed()).isFalse();
        assertThat(mine.cancel()).containsExactly("legacy");
        assertThat(limiter.peek(rule, "k", 1).remaining()).as("its own unit, not the old two").isEqualTo(1);
    }

    /** Promise: a refund gives back only units that are still the reservation's (old form, reset, re-take). */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "TOKEN_BUCKET", "GCRA"})
    void aReservationOnAnOldFormStateGivesNothingAfterAResetAndAnotherOldFormState(Algorithm algorithm) {
        Rule rule = Rule.of("legacy", algorithm, 3, WINDOW);
        legacy(rule, "k");
        Reservation mine = limiter.reserve(rule, "k");
        assertThat(mine.allowed()).isTrue();
        limiter.reset(rule, "k");
        // The previous version, still running during a rolling deploy, writes the key again.
        legacy(rule, "k");
        assertThat(mine.cancel()).as("nothing of its own is left").isEmpty();
        assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(1);
    }
}
