package dev.ratelimit.resilient;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deny cache never turns away a request the store would allow, at its edges: a refreshed
 * decision path whose rule's limit grew, a smaller cost after a larger one was rejected, shadow
 * and count-rejected rules (never remembered), a request mixing a remembered rule with a
 * count-rejected one. Each test empties the store behind the cache's back where a remembered
 * rejection would show, so a wrongly kept one fails it.
 */
class DenyCacheEdgesTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final Rule HOURLY = Rule.of("hourly", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));

    private final ManualClock clock = new ManualClock(T0);
    private final LocalRateLimiter store = LocalRateLimiter.withClock(clock, 100);

    /** Promise: a refreshed path (replacing) with a grown limit asks the store again. */
    @Test
    void aRefreshedPathWhoseLimitGrewAsksTheStore() {
        ResilientRateLimiter before = ResilientRateLimiter.builder(store).clock(clock).build();
        assertThat(before.acquire(HOURLY, "k").allowed()).isTrue();
        assertThat(before.acquire(HOURLY, "k").allowed()).isFalse();
        ResilientRateLimiter after = ResilientRateLimiter.builder(store).clock(clock).replacing(before).build();
        Rule grown = Rule.of("hourly", Algorithm.FIXED_WINDOW, 2, Duration.ofHours(1));
        assertThat(after.acquire(grown, "k").allowed()).as("1 of 2 taken").isTrue();
        assertThat(after.acquire(HOURLY, "k").allowed()).as("the old limit, full").isFalse();
    }

    /** Promise: a rejection is replayed only for the same cost. */
    @Test
    void aSmallerCostAfterALargerOneWasRejectedAsksTheStore() {
        Rule three = Rule.of("three", Algorithm.SLIDING_LOG, 3, Duration.ofHours(1));
        ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build();
        assertThat(limiter.acquire(three, "k", 2).allowed()).isTrue();
        assertThat(limiter.acquire(three, "k", 2).allowed()).isFalse();
        assertThat(limiter.acquire(three, "k", 1).allowed()).as("one unit is left").isTrue();
    }

    /** Promise: shadow and count-rejected rules' rejections are never remembered. */
    @Test
    void shadowAndCountRejectedRejectionsAreNotRemembered() {
        Rule shadow = HOURLY.withShadow(true);
        Rule counted = Rule.fixedWindow("counted", 1, Duration.ofHours(1)).withCountRejected(true);
        ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build();
        for (Rule rule : List.of(shadow, counted)) {
            limiter.acquire(rule, "k");
            assertThat(store.peek(rule, "k", 1).allowed()).isFalse();
            limiter.acquire(rule, "k");
            store.reset(rule, "k");
            assertThat(limiter.acquire(rule, "k").allowed()).as(rule.name() + " asked of the store").isTrue();
        }
    }

    /** Promise: a request a count-rejected rule must see is never replayed, even beside a remembered rule. */
    @Test
    void aRequestWithACountRejectedRuleIsNeverReplayed() {
        Rule counted = Rule.slidingLog("counted", 5, Duration.ofHours(1)).withCountRejected(true);
        ResilientRateLimiter limiter = ResilientRateLimiter.builder(store).clock(clock).build();
        assertThat(limiter.acquire(HOURLY, "k").allowed()).isTrue();
        assertThat(limiter.acquire(HOURLY, "k").allowed()).isFalse();
        limiter.acquireAll(List.of(Claim.of(HOURLY, "k"), Claim.of(counted, "k")));
        assertThat(store.peek(counted, "k", 1).remaining()).as("the attempt recorded by the store").isEqualTo(4);
    }
}
