package dev.ratelimit.valkey;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Decision;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The bounded list of keys nearest their limit that {@code top} keeps while it scans. */
class NearestKeysTest {

    private static Decision allowed(long remaining, long fullInSeconds) {
        return Verdicts.allowed("r", 10, remaining, Duration.ofSeconds(fullInSeconds));
    }

    @Test
    void keepsOnlyTheNearestInOrderWhateverHowManyAreSeen() {
        NearestKeys nearest = new NearestKeys(3);
        for (int i = 0; i < 10_000; i++) {
            nearest.add("k" + i, allowed(5 + i % 5, 1));
        }
        nearest.add("far", allowed(9, 1));
        nearest.add("rejected", Verdicts.rejected("r", 10, 0, Duration.ofSeconds(9), Duration.ofSeconds(1)));
        nearest.add("one-left-long", allowed(1, 60));
        nearest.add("one-left-soon", allowed(1, 5));
        nearest.addUnreadable("broken");

        assertThat(nearest.keys()).containsExactly("broken", "rejected", "one-left-long");
        assertThat(nearest.seen()).isEqualTo(10_005);
    }

    @Test
    void aKeyScanReturnsTwiceTakesOnePlaceAndItsLatestDecision() {
        NearestKeys nearest = new NearestKeys(2);
        nearest.add("a", allowed(1, 1));
        nearest.add("b", allowed(2, 1));
        nearest.add("a", allowed(3, 1));
        nearest.add("c", allowed(4, 1));

        assertThat(nearest.keys()).containsExactly("b", "a");
        assertThat(nearest.seen()).isEqualTo(3);
    }

    @Test
    void atLeastOneIsKept() {
        assertThatThrownBy(() -> new NearestKeys(0)).hasMessage("top must be at least 1, not 0");
    }
}
