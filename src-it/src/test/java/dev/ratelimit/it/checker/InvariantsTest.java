package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The invariants on histories written by hand: each flags what its definition forbids, and
 * nothing that a lost reply or a refund can explain.
 */
class InvariantsTest {

    private static final long T0 = 1_700_000_000_000L;

    private final List<Event> events = new ArrayList<>();
    private long op;

    private void rule(Rule rule) {
        events.add(new Event.RuleSet(0, T0, 0, rule, null, null, "initial"));
    }

    /** A call the store answered: every rule's verdict, the request allowed when all are. */
    private long call(Event.Kind kind, long at, Rule rule, long cost, boolean allowed, long retryAfter) {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(rule, "k", cost));
        Decision decision = allowed ? Decision.allowed(rule.name(), rule.limit(), 0, Duration.ZERO)
                : Decision.rejected(rule.name(), rule.limit(), 0, Duration.ofMillis(retryAfter), Duration.ofMillis(retryAfter));
        Decisions decisions = Decisions.of(claims, List.of(decision));
        events.add(new Event.Call(id, at, 0, kind, claims));
        events.add(new Event.StoreCall(id, at, 0, kind.name().toLowerCase(), claims, decisions, null, null));
        events.add(new Event.Decided(id, at, 0, decisions));
        return id;
    }

    /** A call whose reply was lost: the store may have counted it. */
    private void lost(long at, Rule rule, long cost) {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(rule, "k", cost));
        events.add(new Event.Call(id, at, 0, Event.Kind.ACQUIRE, claims));
        events.add(new Event.StoreCall(id, at, 0, "acquire", claims, null, "RateLimitException: read timed out", null));
        events.add(new Event.Failed(id, at, 0, "RateLimitException: read timed out", null));
    }

    private void settle(long at, long reservation, String how, List<String> asked, List<String> given) {
        events.add(new Event.Settled(++op, at, 0, reservation, how, asked, given, null));
    }

    private List<Violation> check() {
        List<Event> history = new ArrayList<>();
        history.add(new Event.Start(0, T0, 0, 0, "hand", Map.of("storeEvents", true)));
        history.addAll(events);
        return Invariants.check(history);
    }

    @Test
    void aFixedWindowAllowingPastItsLimitIsFlagged() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(1));
        rule(rule);
        call(Event.Kind.ACQUIRE, T0 + 100, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, T0 + 200, rule, 1, true, 0);
        assertThat(check()).isEmpty();
        call(Event.Kind.ACQUIRE, T0 + 900, rule, 1, true, 0);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().startsWith("fixed-window");
    }

    @Test
    void aSlidingLogRejectingWithRoomIsALockoutUnlessALostReplyMayHaveFilledIt() {
        Rule rule = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofSeconds(1));
        rule(rule);
        lost(T0, rule, 1);
        call(Event.Kind.ACQUIRE, T0 + 500, rule, 1, false, 500);
        assertThat(check()).as("the lost call may have taken the unit").isEmpty();
        call(Event.Kind.ACQUIRE, T0 + 1_000, rule, 1, false, 1);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().contains("room");
    }

    @Test
    void aRetryAfterBeforeTheUnitsLeaveTheWindowIsEarly() {
        Rule rule = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofSeconds(1));
        rule(rule);
        call(Event.Kind.ACQUIRE, T0, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, T0 + 400, rule, 1, false, 600);
        assertThat(check()).isEmpty();
        call(Event.Kind.ACQUIRE, T0 + 500, rule, 1, false, 499);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().contains("never earlier");
    }

    @Test
    void aBucketRefundThatGivesBackRefilledUnitsIsFlagged() {
        // Issue 20, finding 2: 10 reserved at 0 s, 10 allowed at 10 s, the reservation cancelled
        // (the store says it gave back), 10 more allowed at once: 20 in no time under a burst of 10.
        Rule rule = Rule.of("bucket", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1)).withBurst(10);
        rule(rule);
        long reserved = call(Event.Kind.RESERVE, T0, rule, 10, true, 0);
        call(Event.Kind.ACQUIRE, T0 + 10_000, rule, 10, true, 0);
        settle(T0 + 10_000, reserved, "cancel", List.of("bucket"), List.of("bucket"));
        assertThat(check()).isEmpty();
        call(Event.Kind.ACQUIRE, T0 + 10_000, rule, 10, true, 0);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().startsWith("token-bucket");
    }

    @Test
    void aLeaseReleasedLeavesRoomAndOneHeldDoesNot() {
        Rule rule = Rule.of("inflight", Algorithm.CONCURRENCY, 1, Duration.ofSeconds(60));
        rule(rule);
        long held = call(Event.Kind.RESERVE, T0, rule, 1, true, 0);
        call(Event.Kind.RESERVE, T0 + 10, rule, 1, false, 59_990);
        assertThat(check()).isEmpty();
        settle(T0 + 20, held, "commit", List.of("inflight"), null);
        call(Event.Kind.RESERVE, T0 + 30, rule, 1, false, 59_970);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().startsWith("concurrency");
    }
}
