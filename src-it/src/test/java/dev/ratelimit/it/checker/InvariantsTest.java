package dev.ratelimit.it.checker;

import dev.ratelimit.internal.Verdicts;
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
        Decision decision = allowed ? Verdicts.allowed(rule.name(), rule.limit(), 0, Duration.ZERO)
                : Verdicts.rejected(rule.name(), rule.limit(), 0, Duration.ofMillis(retryAfter), Duration.ofMillis(retryAfter));
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
        return check("hand", Map.of("storeEvents", true));
    }

    /** A history of requests over HTTP: the store's calls are not seen. */
    private List<Violation> checkOverHttp() {
        return check("HTTP", Map.of("storeEvents", false));
    }

    private List<Violation> check(String target, Map<String, Object> options) {
        List<Event> history = new ArrayList<>();
        history.add(new Event.Start(0, T0, 0, 0, target, options));
        history.addAll(events);
        return Invariants.check(history);
    }

    /** A call on the server clock: sent at {@code sent}, decided by Valkey's TIME before it returned at {@code answered}. */
    private void timed(long sent, long answered, Rule rule, boolean allowed, long retryAfter) {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(rule, "k", 1));
        Decision decision = allowed ? Verdicts.allowed(rule.name(), rule.limit(), 0, Duration.ZERO)
                : Verdicts.rejected(rule.name(), rule.limit(), 0, Duration.ofMillis(retryAfter), Duration.ofMillis(retryAfter));
        Decisions decisions = Decisions.of(claims, List.of(decision));
        events.add(new Event.Call(id, sent, 0, Event.Kind.ACQUIRE, claims));
        events.add(new Event.StoreCall(id, answered, 0, "acquire", claims, decisions, null, null));
        events.add(new Event.Decided(id, answered, 0, decisions));
    }

    private List<Violation> checkOnTheServerClock() {
        return check("hand", Map.of("storeEvents", true, "clock", "server"));
    }

    /**
     * On the server clock a decision's time is known only between the call's sending and its
     * answer: a unit taken by a call that straddles a window's start may count in either window,
     * so a rejection in the later one is no lockout; in the window after, it is.
     */
    @Test
    void onTheServerClockAUnitCountsWhereverItsCallMayHaveBeenDecided() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(10));
        rule(rule);
        timed(T0 + 8, T0 + 12, rule, true, 0);
        timed(T0 + 15, T0 + 16, rule, false, 4);
        assertThat(checkOnTheServerClock()).as("the unit may be in [10, 20)").isEmpty();
        assertThat(check()).as("read as decided when sent, the same history has a lockout")
                .singleElement().extracting(Violation::invariant).asString().contains("not rejected");
        timed(T0 + 25, T0 + 26, rule, false, 4);
        assertThat(checkOnTheServerClock()).singleElement().extracting(Violation::invariant).asString()
                .isEqualTo("fixed-window: not rejected while the history shows room");
    }

    /**
     * A sliding window counter's reservation given back within its window may say so; one given
     * back once that window has ended must give nothing: saying it did is a violation.
     */
    @Test
    void aRefundThatSaysItGaveBackAfterTheWindowEndedIsFlagged() {
        Rule rule = Rule.of("swc", Algorithm.SLIDING_WINDOW_COUNTER, 2, Duration.ofMillis(100));
        rule(rule);
        long inTime = call(Event.Kind.RESERVE, T0 + 10, rule, 1, true, 0);
        settle(T0 + 90, inTime, "cancel", List.of("swc"), List.of("swc"));
        assertThat(check()).isEmpty();
        long late = call(Event.Kind.RESERVE, T0 + 110, rule, 1, true, 0);
        settle(T0 + 200, late, "cancel", List.of("swc"), List.of());
        assertThat(check()).as("given nothing back after its window: as it should").isEmpty();
        long wrong = call(Event.Kind.RESERVE, T0 + 210, rule, 1, true, 0);
        settle(T0 + 300, wrong, "cancel", List.of("swc"), List.of("swc"));
        assertThat(check()).singleElement().extracting(Violation::invariant).asString()
                .isEqualTo("sliding-window-counter: a refund gives nothing back once the units' window has ended");
    }

    /**
     * A request rejected by a local policy after the store allowed its other rule: the store must
     * be asked to give that rule back within the call, else the request took units it was refused.
     */
    @Test
    void aRejectedRequestWhoseStorePartWasNotGivenBackIsFlagged() {
        Rule shared = Rule.of("shared", Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(1_000));
        Rule local = Rule.of("local", Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(1_000));
        rule(shared);
        events.add(new Event.RuleSet(0, T0, 0, local, "local", local, "initial"));
        for (boolean givenBack : new boolean[] {true, false}) {
            long id = ++op;
            List<Claim> claims = List.of(Claim.of(shared, "k", 1), Claim.of(local, "k", 1));
            Decisions store = Decisions.of(List.of(claims.get(0)),
                    List.of(Verdicts.allowed("shared", 5, 4, Duration.ofMillis(1_000))));
            Decision refused = Verdicts.rejected("local", 5, 0, Duration.ofMillis(500), Duration.ofMillis(500))
                    .toBuilder().basis(Decision.Basis.LOCAL).build();
            events.add(new Event.Call(id, T0 + op, 0, Event.Kind.ACQUIRE, claims));
            events.add(new Event.StoreCall(id, T0 + op, 0, "reserve", List.of(claims.get(0)), store, null, null));
            if (givenBack) {
                events.add(new Event.StoreRefund(id, T0 + op, 0, id, List.of("shared"), List.of("shared"), null));
            }
            events.add(new Event.Decided(id, T0 + op, 0, Decisions.of(claims, List.of(store.all().get(0), refused))));
        }
        assertThat(check()).filteredOn(v -> v.invariant().startsWith("all or nothing")).singleElement()
                .extracting(Violation::op).isEqualTo(op);
    }

    /** On the server clock a key's TTL ends by its state's end: a fixed window's, no slack. */
    @Test
    void onTheServerClockATtlPastTheWindowsEndIsFlagged() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 1, Duration.ofMillis(100));
        rule(rule);
        timed(T0 + 30, T0 + 31, rule, true, 0);
        events.add(new Event.Ttl(op, T0 + 31, 0, rule, "k", "rl:fw:k", 69, T0 + 32));
        assertThat(checkOnTheServerClock()).isEmpty();
        events.add(new Event.Ttl(op, T0 + 32, 0, rule, "k", "rl:fw:k", 99, T0 + 32));
        assertThat(checkOnTheServerClock()).singleElement().extracting(Violation::invariant).asString()
                .startsWith("ttl:");
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

    /**
     * A calendar day in Berlin the day clocks go forward (23 hours): counted per local day, not
     * per 24 hours since the epoch. A unit at 23:30 local and one at 00:30 local are in two
     * days (both allowed, no breach), whereas a rolling 1d window would put them in one UTC day;
     * a rejection at 00:30 with the day's unit taken before midnight is a lockout, and a second
     * unit allowed at 23:59 the same local day a breach.
     */
    @Test
    void aCalendarDayCountsPerLocalDayAcrossADaylightSavingChange() {
        java.time.ZoneId berlin = java.time.ZoneId.of("Europe/Berlin");
        Rule rule = Rule.of("day", Algorithm.FIXED_WINDOW, 1, Duration.ofDays(1))
                .toBuilder().calendar(dev.ratelimit.CalendarWindow.of(dev.ratelimit.CalendarWindow.Unit.DAY, berlin)).build();
        long evening = java.time.LocalDateTime.parse("2026-03-28T23:30").atZone(berlin).toInstant().toEpochMilli();
        long morning = java.time.LocalDateTime.parse("2026-03-29T00:30").atZone(berlin).toInstant().toEpochMilli();
        events.add(new Event.RuleSet(0, evening - 1_000, 0, rule, null, null, "initial"));
        call(Event.Kind.ACQUIRE, evening, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, morning, rule, 1, true, 0);
        assertThat(check()).as("one unit in each local day").isEmpty();
        long late = java.time.LocalDateTime.parse("2026-03-29T23:59").atZone(berlin).toInstant().toEpochMilli();
        call(Event.Kind.ACQUIRE, late, rule, 1, true, 0);
        assertThat(check()).singleElement().extracting(Violation::message).asString()
                .contains("[" + java.time.LocalDate.parse("2026-03-29").atStartOfDay(berlin).toInstant().toEpochMilli() + ", "
                        + java.time.LocalDate.parse("2026-03-30").atStartOfDay(berlin).toInstant().toEpochMilli() + ")");
    }

    @Test
    void aCalendarMonthRejectingOnTheFirstIsALockout() {
        java.time.ZoneId berlin = java.time.ZoneId.of("Europe/Berlin");
        Rule rule = Rule.of("month", Algorithm.FIXED_WINDOW, 1, Duration.ofDays(1))
                .toBuilder().calendar(dev.ratelimit.CalendarWindow.of(dev.ratelimit.CalendarWindow.Unit.MONTH, berlin)).build();
        long february = java.time.LocalDateTime.parse("2026-02-28T23:59").atZone(berlin).toInstant().toEpochMilli();
        long march = java.time.LocalDateTime.parse("2026-03-01T00:00").atZone(berlin).toInstant().toEpochMilli();
        events.add(new Event.RuleSet(0, february - 1_000, 0, rule, null, null, "initial"));
        call(Event.Kind.ACQUIRE, february, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, march - 1, rule, 1, false, 1);
        assertThat(check()).isEmpty();
        call(Event.Kind.ACQUIRE, march, rule, 1, false, 1);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().contains("room");
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

    private void failover(long at, String kind) {
        events.add(new Event.Fault(++op, at, 0, kind, null, null, "primary redis://127.0.0.1:2, formerly redis://127.0.0.1:1"));
    }

    /**
     * A Sentinel failover may lose any write: a call during it may meet a primary without the
     * units taken before (allowed past the limit: no breach), and after it the limit counts
     * again from the failover's end.
     */
    @Test
    void aFailoverMayLoseWhatWasTakenAndAfterItTheLimitHoldsAgain() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 2, Duration.ofHours(1));
        rule(rule);
        call(Event.Kind.ACQUIRE, T0 + 10, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, T0 + 20, rule, 1, true, 0);
        failover(T0 + 30, "failover-begin");
        call(Event.Kind.ACQUIRE, T0 + 40, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, T0 + 45, rule, 1, true, 0);
        failover(T0 + 50, "failover-end");
        call(Event.Kind.ACQUIRE, T0 + 60, rule, 1, true, 0);
        call(Event.Kind.ACQUIRE, T0 + 70, rule, 1, true, 0);
        assertThat(check()).isEmpty();
        assertThat(Invariants.check(withoutFaults())).as("the same calls with no failover").isNotEmpty();
        call(Event.Kind.ACQUIRE, T0 + 80, rule, 1, true, 0);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().startsWith("fixed-window");
    }

    /**
     * A failover may also lose a refund: the new primary may still count units the history saw
     * given back, so a rejection is no lockout until nothing written before the failover can
     * weigh any more (a sliding log's window after its end); then it is.
     */
    @Test
    void afterAFailoverARefundMayBeUndoneForAsLongAsItsUnitsCanWeigh() {
        Rule rule = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofSeconds(1));
        rule(rule);
        long reserved = call(Event.Kind.RESERVE, T0, rule, 1, true, 0);
        settle(T0 + 100, reserved, "cancel", List.of("log"), List.of("log"));
        failover(T0 + 200, "failover-begin");
        failover(T0 + 300, "failover-end");
        call(Event.Kind.ACQUIRE, T0 + 400, rule, 1, false, 600);
        assertThat(check()).isEmpty();
        assertThat(Invariants.check(withoutFaults())).as("the same calls with no failover").singleElement()
                .extracting(Violation::invariant).asString().contains("room");
        call(Event.Kind.ACQUIRE, T0 + 1_400, rule, 1, false, 1);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().contains("room");
    }

    /**
     * An operator's peek ({@code ratelimit inspect}) sees the units an instance leased ahead,
     * which it gives back to nobody: its rejection is no lockout while they may be held; the
     * instance's own would be (it takes its leases back first).
     */
    @Test
    void anOperatorsPeekSeesTheUnitsAnInstanceLeasedAhead() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 5, Duration.ofMillis(100));
        rule(rule);
        call(Event.Kind.ACQUIRE, T0 + 10, rule, 4, true, 0);
        List<Claim> claims = List.of(Claim.of(rule, "k", 1));
        Decisions rejected = Decisions.of(claims, List.of(Verdicts.rejected(rule.name(), rule.limit(), 0,
                Duration.ofMillis(90), Duration.ofMillis(90))));
        long operator = ++op;
        events.add(new Event.Call(operator, T0 + 20, 0, Event.Kind.PEEK, claims, Target.OPERATOR));
        events.add(new Event.Decided(operator, T0 + 20, 0, rejected));
        Map<String, Object> leasing = Map.of("storeEvents", true, "instances", 1,
                "localLeases", Map.of("fw", Map.of("size", 4, "ms", 50)));
        assertThat(check("hand", leasing)).isEmpty();
        long own = ++op;
        events.add(new Event.Call(own, T0 + 20, 0, Event.Kind.PEEK, claims, 0));
        events.add(new Event.Decided(own, T0 + 20, 0, rejected));
        assertThat(check("hand", leasing)).singleElement().extracting(Violation::invariant).asString().contains("room");
    }

    /** The hand-written history without its faults. */
    private List<Event> withoutFaults() {
        List<Event> history = new ArrayList<>();
        history.add(new Event.Start(0, T0, 0, 0, "hand", Map.of("storeEvents", true)));
        events.stream().filter(e -> !(e instanceof Event.Fault)).forEach(history::add);
        return history;
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
        Rule rule = Rule.tokenBucket("bucket", 1, Duration.ofSeconds(1), 10);
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

    @Test
    void overHttpAFiveHundredTheApplicationWasNotAskedForIsFlaggedAndARetryAfterBeforeAFixedWindowsT() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
        rule(rule);
        List<Claim> claims = List.of(Claim.of(rule, "k", 1));
        events.add(new Event.Call(++op, T0, 0, Event.Kind.ACQUIRE, claims, 0, T0 + 3));
        events.add(new Event.Failed(op, T0 + 3, 0, "the filter decided nothing", null));
        events.add(new Event.Response(op, T0 + 3, 0, 500, 200, null, null, "plain"));
        assertThat(checkOverHttp()).singleElement().extracting(Violation::invariant).asString().startsWith("http: a response");
        events.clear();
        rule(rule);
        // A 429 whose Retry-After (1 s) precedes the end of the t the field gives (5 s).
        Decisions rejected = Decisions.of(claims, List.of(Verdicts.rejected("fw", 1, 0, Duration.ofSeconds(5),
                Duration.ofSeconds(1))));
        events.add(new Event.Call(++op, T0, 0, Event.Kind.ACQUIRE, claims, 0, T0 + 3));
        events.add(new Event.Decided(op, T0 + 3, 0, rejected));
        events.add(new Event.Response(op, T0 + 3, 0, 429, 200, "\"fw\";r=0;t=5", "1", "plain"));
        assertThat(checkOverHttp()).extracting(Violation::invariant).anyMatch(i -> i.contains("Retry-After never precedes"));
    }

    @Test
    void aDecisionKnownOnlyAsAnIntervalIsJudgedAtItsMostLenientEnd() {
        // Log of 1 per second: a unit sent at 0 and decided by 5; the next, sent at 1000 and seen
        // decided by 1004, may well have come 1 s after the first, so its allowance is no breach.
        Rule rule = Rule.of("log", Algorithm.SLIDING_LOG, 1, Duration.ofSeconds(1));
        rule(rule);
        List<Claim> claims = List.of(Claim.of(rule, "k", 1));
        Decisions allowed = Decisions.of(claims, List.of(Verdicts.allowed("log", 1, 0, Duration.ZERO)));
        events.add(new Event.Call(++op, T0, 0, Event.Kind.ACQUIRE, claims, 0, T0 + 5));
        events.add(new Event.Decided(op, T0 + 5, 0, allowed));
        events.add(new Event.Call(++op, T0 + 1_000, 0, Event.Kind.ACQUIRE, claims, 0, T0 + 1_004));
        events.add(new Event.Decided(op, T0 + 1_004, 0, allowed));
        assertThat(check()).isEmpty();
        events.add(new Event.Call(++op, T0 + 1_500, 0, Event.Kind.ACQUIRE, claims, 0, T0 + 1_504));
        events.add(new Event.Decided(op, T0 + 1_504, 0, allowed));
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().startsWith("sliding-log");
    }

    @Test
    void aKeyHeldToItsOwnRuleIsJudgedByIt() {
        // The rule allows 5; key k is held to a plan of 1: its second unit breaks the plan's limit.
        Rule rule = Rule.of("api", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));
        rule(rule);
        Rule plan = Rule.of("api", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
        events.add(new Event.RuleSet(0, T0, 0, plan, null, null, "held", "k"));
        call(Event.Kind.ACQUIRE, T0 + 1, plan, 1, true, 0);
        assertThat(check()).isEmpty();
        call(Event.Kind.ACQUIRE, T0 + 2, plan, 1, true, 0);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString().startsWith("fixed-window");
    }

    @Test
    void aRejectionWhoseRetryAfterPrecedesItsEffectiveWindowIsFlagged() {
        Rule rule = Rule.of("tb", Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(30));
        rule(rule);
        List<Claim> claims = List.of(Claim.of(rule, "k", 1));
        // The bucket's next unit in 6 s, but the decision says none comes for 30 s.
        Decision rejected = Verdicts.rejected("tb", 5, 0, Duration.ofSeconds(30), Duration.ofSeconds(6))
                .toBuilder().effectiveWindow(Duration.ofSeconds(30)).build();
        Decisions decisions = Decisions.of(claims, List.of(rejected));
        events.add(new Event.Call(++op, T0, 0, Event.Kind.ACQUIRE, claims));
        events.add(new Event.StoreCall(op, T0, 0, "acquire", claims, decisions, null, null));
        events.add(new Event.Decided(op, T0, 0, decisions));
        assertThat(check()).extracting(Violation::invariant)
                .contains("token-bucket: a rejection's retry-after never precedes its effective window");
    }

    @Test
    void moreThanRemainingWithinTheEffectiveWindowIsFlaggedUnlessRoomWasMade() {
        Rule rule = Rule.of("tb", Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(30));
        rule(rule);
        List<Claim> one = List.of(Claim.of(rule, "k", 1));
        // Allowed with 1 remaining and the next unit in 6 s: two more within 6 s break the promise.
        decided(T0, one, Verdicts.allowed("tb", 5, 1, Duration.ofSeconds(24)).toBuilder().effectiveWindow(Duration.ofSeconds(6)).build());
        decided(T0 + 1_000, one, Verdicts.allowed("tb", 5, 0, Duration.ofSeconds(30)));
        decided(T0 + 2_000, one, Verdicts.allowed("tb", 5, 0, Duration.ofSeconds(30)));
        assertThat(check()).extracting(Violation::invariant)
                .contains("token-bucket: no more than r units within the effective window t");
        // A refund in between made room: the promise no longer holds.
        events.clear();
        rule(rule);
        decided(T0, one, Verdicts.allowed("tb", 5, 1, Duration.ofSeconds(24)).toBuilder().effectiveWindow(Duration.ofSeconds(6)).build());
        long reserved = ++op;
        events.add(new Event.Call(reserved, T0 + 500, 0, Event.Kind.RESERVE, one));
        Decisions taken = Decisions.of(one, List.of(Verdicts.allowed("tb", 5, 0, Duration.ofSeconds(30))));
        events.add(new Event.StoreCall(reserved, T0 + 500, 0, "reserve", one, taken, null, null));
        events.add(new Event.Decided(reserved, T0 + 500, 0, taken));
        settle(T0 + 600, reserved, "cancel", List.of("tb"), List.of("tb"));
        decided(T0 + 1_000, one, Verdicts.allowed("tb", 5, 0, Duration.ofSeconds(30)));
        assertThat(check()).extracting(Violation::invariant)
                .doesNotContain("token-bucket: no more than r units within the effective window t");
    }

    /** An acquiring call the store answered with the given decision. */
    private void decided(long at, List<Claim> claims, Decision decision) {
        long id = ++op;
        Decisions decisions = Decisions.of(claims, List.of(decision));
        events.add(new Event.Call(id, at, 0, Event.Kind.ACQUIRE, claims));
        events.add(new Event.StoreCall(id, at, 0, "acquire", claims, decisions, null, null));
        events.add(new Event.Decided(id, at, 0, decisions));
    }

    /**
     * Two instances: a give-back on one is seen by the other's deny cache only after its hold,
     * so a rejection within the hold is no lockout, and one after it is.
     */
    @Test
    void aGiveBackOnAnotherInstanceLeavesItsDenyCacheTheHoldAndNoMore() {
        Rule rule = Rule.of("fw", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
        rule(rule);
        List<Claim> one = List.of(Claim.of(rule, "k", 1));
        long reserved = ++op;
        Decisions taken = Decisions.of(one, List.of(Verdicts.allowed("fw", 1, 0, Duration.ofSeconds(60))));
        events.add(new Event.Call(reserved, T0, 0, Event.Kind.RESERVE, one, 1));
        events.add(new Event.StoreCall(reserved, T0, 0, "reserve", one, taken, null, null));
        events.add(new Event.Decided(reserved, T0, 0, taken));
        settle(T0 + 100, reserved, "cancel", List.of("fw"), List.of("fw"));
        call(Event.Kind.ACQUIRE, T0 + 600, rule, 1, false, 59_000);
        Map<String, Object> twoInstances = Map.of("storeEvents", true, "instances", 2, "denyCache", true,
                "denyCacheHoldMs", 1_000L);
        assertThat(check("hand", twoInstances)).as("a replay within the hold").isEmpty();
        call(Event.Kind.ACQUIRE, T0 + 1_200, rule, 1, false, 58_000);
        assertThat(check("hand", twoInstances)).extracting(Violation::invariant)
                .anyMatch(i -> i.startsWith("fixed-window: not rejected"));
    }
}
