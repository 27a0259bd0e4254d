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
    void eachAlgorithmsFactoryMakesTheRuleItsPartsSay() {
        java.time.ZoneId paris = java.time.ZoneId.of("Europe/Paris");
        assertThat(Rule.fixedWindow("a", 5, MINUTE)).isEqualTo(Rule.of("a", Algorithm.FIXED_WINDOW, 5, MINUTE));
        assertThat(Rule.slidingLog("a", 5, MINUTE)).isEqualTo(Rule.of("a", Algorithm.SLIDING_LOG, 5, MINUTE));
        assertThat(Rule.slidingWindowCounter("a", 5, MINUTE))
                .isEqualTo(Rule.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 5, MINUTE));
        assertThat(Rule.tokenBucket("a", 5, MINUTE)).isEqualTo(Rule.of("a", Algorithm.TOKEN_BUCKET, 5, MINUTE));
        assertThat(Rule.gcra("a", 5, MINUTE, 9).burst()).isEqualTo(9);
        assertThat(Rule.tokenBucket("a", 5, MINUTE, 9).capacity()).isEqualTo(9);
        Rule permits = Rule.concurrency("a", 4, Duration.ofSeconds(30));
        assertThat(permits.algorithm()).isEqualTo(Algorithm.CONCURRENCY);
        assertThat(permits.window()).as("the permit timeout").isEqualTo(Duration.ofSeconds(30));
        Rule monthly = Rule.fixedWindow("m", 100, CalendarWindow.month(paris));
        assertThat(monthly.calendar()).isEqualTo(CalendarWindow.of(CalendarWindow.Unit.MONTH, paris));
        assertThat(monthly.window()).isEqualTo(Duration.ofDays(31));
        assertThat(CalendarWindow.day(paris).unit()).isEqualTo(CalendarWindow.Unit.DAY);
        assertThat(CalendarWindow.week(paris).unit()).isEqualTo(CalendarWindow.Unit.WEEK);
        assertThatThrownBy(() -> Rule.concurrency("a", 4, MINUTE).withCountRejected(true))
                .hasMessageContaining("'a'").hasMessageContaining("count-rejected");
    }

    @Test
    void everyRuleIsItsBuildersAgainAndTheBuilderChecksWhatTheFactoriesCannotMiss() {
        java.time.ZoneId tokyo = java.time.ZoneId.of("Asia/Tokyo");
        for (Rule rule : java.util.List.of(Rule.fixedWindow("a", 5, MINUTE).withCountRejected(true).withShadow(true),
                Rule.fixedWindow("c", 7, CalendarWindow.week(tokyo)).withCountRejected(true),
                Rule.gcra("g", 3, MINUTE, 11).withShadow(true), Rule.tokenBucket("t", 3, MINUTE, 2),
                Rule.concurrency("p", 2, MINUTE), Rule.slidingLog("l", 9, MINUTE).withCountRejected(true))) {
            assertThat(rule.toBuilder().build()).as("%s rebuilt", rule).isEqualTo(rule)
                    .hasSameHashCodeAs(rule).hasToString(rule.toString());
        }
        assertThat(Rule.fixedWindow("a", 10, MINUTE).withCountRejected(true).toBuilder().limit(20).build())
                .as("a rule without a burst of its own takes another limit")
                .isEqualTo(Rule.fixedWindow("a", 20, MINUTE).withCountRejected(true));
        assertThat(Rule.concurrency("p", 2, MINUTE).toBuilder().limit(3).build()).isEqualTo(Rule.concurrency("p", 3, MINUTE));
        assertThat(Rule.tokenBucket("t", 10, MINUTE).toBuilder().limit(20).build())
                .as("a burst that was the limit follows it").isEqualTo(Rule.tokenBucket("t", 20, MINUTE));
        assertThat(Rule.tokenBucket("t", 10, MINUTE, 15).toBuilder().limit(20).build().burst())
                .as("a burst of its own stays").isEqualTo(15);
        assertThatThrownBy(() -> Rule.builder("x", Algorithm.FIXED_WINDOW).limit(5).window(MINUTE).burst(6).build())
                .hasMessageContaining("'x'").hasMessageContaining("burst 6");
        assertThatThrownBy(() -> Rule.builder("x", Algorithm.GCRA).limit(5).build())
                .isInstanceOf(NullPointerException.class).hasMessageContaining("window");
        assertThatThrownBy(() -> Rule.builder("x", Algorithm.GCRA).limit(5).calendar(CalendarWindow.day(tokyo)).build())
                .hasMessageContaining("'x'").hasMessageContaining("fixed-window");
        assertThat(Rule.builder("x", Algorithm.FIXED_WINDOW).limit(5).calendar(CalendarWindow.day(tokyo))
                .window(MINUTE).build().calendar()).as("a window set after a calendar replaces it").isNull();
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
        Decision rejected = Decision.builder("r", 5).retryAfter(Duration.ofSeconds(2)).build();
        assertThatThrownBy(() -> Decisions.of(false, java.util.List.of(rejected), Duration.ofSeconds(-1)))
                .hasMessageContaining("negative");
        Decision allowed = Decision.builder("r", 10).remaining(3).resetAfter(Duration.ofSeconds(10)).build();
        assertThat(allowed.toBuilder().remaining(0).retryAfter(Duration.ofSeconds(2)).build().effectiveWindow())
                .as("a default effective window follows a new retry after").isEqualTo(Duration.ofSeconds(2));
        Decision own = allowed.toBuilder().effectiveWindow(Duration.ofSeconds(4)).build();
        assertThat(own.toBuilder().remaining(1).build().effectiveWindow()).as("one of its own stays")
                .isEqualTo(Duration.ofSeconds(4));
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
