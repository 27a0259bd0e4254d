package dev.ratelimit;

import dev.ratelimit.internal.Verdicts;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RuleTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    @Test
    void defaultsBurstToLimitAndCountsOnlyAccepted() {
        Rule rule = Rule.of("api", Algorithm.TOKEN_BUCKET, 100, MINUTE);
        assertThat(rule.burst()).isEqualTo(100);
        assertThat(rule.countRejected()).isFalse();
        assertThat(rule.toBuilder().burst(150).build().capacity()).isEqualTo(150);
    }

    @Test
    void refusesBadValuesNamingThem() {
        assertThatThrownBy(() -> Rule.of("api", Algorithm.GCRA, 0, MINUTE))
                .hasMessageContaining("'api'").hasMessageContaining("limit 0");
        assertThatThrownBy(() -> Rule.of("api", Algorithm.GCRA, -3, MINUTE)).hasMessageContaining("limit -3");
        assertThatThrownBy(() -> Rule.of("api", Algorithm.GCRA, 1, Duration.ZERO)).hasMessageContaining("window PT0S");
        assertThatThrownBy(() -> Rule.of("api", Algorithm.GCRA, 1, Duration.ofNanos(1500)))
                .hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> Rule.of("a b", Algorithm.GCRA, 1, MINUTE)).hasMessageContaining("'a b'");
        assertThatThrownBy(() -> Rule.of("{x}", Algorithm.GCRA, 1, MINUTE)).hasMessageContaining("'{x}'");
        assertThatThrownBy(() -> Rule.of("api", Algorithm.SLIDING_LOG, 5, MINUTE).toBuilder().burst(10).build())
                .hasMessageContaining("burst 10").hasMessageContaining("sliding-log");
        assertThatThrownBy(() -> Rule.gcra("api", 5, MINUTE, 0)).hasMessageContaining("burst 0");
        assertThatThrownBy(() -> Rule.of("api", Algorithm.GCRA, 1L << 40, Duration.ofDays(1)))
                .hasMessageContaining("2^50");
    }

    @Test
    void algorithmIdsRoundTripAndUnknownOnesAreNamed() {
        for (Algorithm algorithm : Algorithm.values()) {
            assertThat(Algorithm.fromId(algorithm.id())).isSameAs(algorithm);
        }
        assertThatThrownBy(() -> Algorithm.fromId("leaky"))
                .hasMessageContaining("'leaky'").hasMessageContaining("token-bucket");
    }

    @Test
    void decisionsKeepTheirInvariants() {
        assertThatThrownBy(() -> Verdicts.rejected("r", 5, 0, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Verdicts.allowed("r", 5, -1, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Decision.builder("r", 0).build()).hasMessageContaining("limit 0");
        assertThatThrownBy(() -> Decision.builder("r", 5).basis(Decision.Basis.UNAVAILABLE).build())
                .hasMessageContaining("unavailable with no retry after");
        assertThat(Decision.builder("r", 5).retryAfter(Duration.ofSeconds(2)).resetAfter(Duration.ofSeconds(9)).build())
                .satisfies(d -> {
                    assertThat(d.allowed()).isFalse();
                    assertThat(d.effectiveWindow()).isEqualTo(Duration.ofSeconds(2));
                });
        Rule a = Rule.of("a", Algorithm.GCRA, 5, MINUTE);
        Rule b = Rule.of("b", Algorithm.GCRA, 5, MINUTE);
        java.util.List<Decision> both = java.util.List.of(
                Verdicts.allowed("a", 5, 4, Duration.ofSeconds(1)),
                Verdicts.rejected("b", 5, 0, Duration.ofSeconds(9), Duration.ofSeconds(3)));
        Decisions decisions = Decisions.of(java.util.List.of(Claim.of(a, "k"), Claim.of(b, "k")), both);
        assertThat(decisions.allowed()).isFalse();
        assertThat(decisions.retryAfter()).isEqualTo(Duration.ofSeconds(3));
        Decisions shadowed = Decisions.of(java.util.List.of(Claim.of(a, "k"), Claim.of(b.withShadow(true), "k")), both);
        assertThat(shadowed.allowed()).isTrue();
        assertThat(shadowed.retryAfter()).isZero();
    }
}
