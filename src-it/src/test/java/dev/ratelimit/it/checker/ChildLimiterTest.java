package dev.ratelimit.it.checker;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Algorithm;
import dev.ratelimit.CalendarWindow;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.ManualClock;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two-JVM target's harness ({@link ChildLimiter}, {@link ChildLimiterMain}): what crosses to
 * the child comes back equal, the child decides on the same keys and clock as an instance here,
 * what it throws is recorded as if thrown here, and a child that stops answering breaks its
 * instance within the bounded wait, naming what was waited for, and is ended.
 */
@ExtendWith(ValkeyExtension.class)
class ChildLimiterTest {

    private final ValkeyServer valkey;

    ChildLimiterTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    /** A RateLimitException of another class, as the breaker's refusal is: its name must survive. */
    private static final class NotAttempted extends RateLimitException {
        NotAttempted(String message) {
            super(message, null);
        }
    }

    @Test
    void rulesDecisionsAndWhatWasThrownReadBackEqual() {
        List<Rule> rules = List.of(
                Rule.of("a", Algorithm.FIXED_WINDOW, 7, Duration.ofMillis(50)).withCountRejected(true).withShadow(true),
                Rule.of("b", Algorithm.FIXED_WINDOW, 3, Duration.ofDays(1))
                        .toBuilder().calendar(CalendarWindow.of(CalendarWindow.Unit.DAY, ZoneId.of("Australia/Lord_Howe"))).build(),
                Rule.tokenBucket("c", 5, Duration.ofMillis(1_000), 9),
                Rule.gcra("d", 2, Duration.ofMillis(10), 1),
                Rule.of("e", Algorithm.SLIDING_LOG, 20, Duration.ofMillis(60_000)),
                Rule.of("f", Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofMillis(200)).withCountRejected(true),
                Rule.of("g", Algorithm.CONCURRENCY, 3, Duration.ofMillis(120_000)).withShadow(true));
        for (Rule rule : rules) {
            assertThat(ChildLines.rule(JsonReader.object(ChildLines.rule(rule).toString()))).isEqualTo(rule);
        }
        List<Claim> claims = rules.stream().map(r -> Claim.of(r, "k", 1)).toList();
        assertThat(ChildLines.claims(JsonReader.object(Json.object().with("c", ChildLines.claims(claims)).toString())
                .get("c"))).isEqualTo(claims);

        Decisions decisions = Decisions.of(false, List.of(
                Decision.builder("a", 7).remaining(0).effectiveWindow(Duration.ofNanos(1_500_001))
                        .resetAfter(Duration.ofMillis(49)).retryAfter(Duration.ofNanos(12_345_678_901L)).build(),
                Verdicts.allowed("b", 3, 2, Duration.ofHours(25)),
                Verdicts.skipped("c", 5).toBuilder().basis(Decision.Basis.LOCAL).build(),
                Verdicts.unavailable("d", 2, Duration.ofSeconds(1))), Duration.ofNanos(12_345_678_901L));
        assertThat(ChildLines.decisions(JsonReader.object(ChildLines.decisions(decisions).toString())))
                .isEqualTo(decisions);

        for (Throwable thrown : List.of(new NotAttempted("acquire not attempted: the circuit breaker for x is open"),
                new RateLimitException("acquire failed on x: JedisConnectionException: reset", null),
                new UnreadableStateException("e", "rule 'e': its state at key k cannot be read"),
                new OutOfMemoryError("client out of memory"), new IllegalStateException("a defect"))) {
            RuntimeException read = ChildLines.thrown(JsonReader.object(ChildLines.thrown(thrown).toString()));
            assertThat(RecordingStore.describe(read)).isEqualTo(RecordingStore.describe(thrown));
            assertThat(read instanceof RateLimitException).as(thrown.toString()).isEqualTo(thrown instanceof RateLimitException);
            if (thrown instanceof UnreadableStateException unreadable) {
                assertThat(((UnreadableStateException) read).ruleName()).isEqualTo(unreadable.ruleName());
            }
        }
    }

    @Test
    void theChildDecidesOnTheSameKeysAndClockAsAnInstanceHere() throws Exception {
        valkey.flushAll();
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        Rule rule = Rule.of("r", Algorithm.FIXED_WINDOW, 2, Duration.ofMillis(1_000));
        Claim claim = Claim.of(rule, "k", 1);
        ChildLimiter child = ChildLimiter.start(config(clock, ChildLimiter.ANSWER_MILLIS));
        // Built as the child builds its own, and as the checker builds an instance here.
        try (RedisClient client = new ErrorClient().client(valkey.url());
             ValkeyRateLimiter here = ValkeyRateLimiter.builder().client(client).keyPrefix("ck:harness").clientClock(clock)
                     .build()) {
            assertThat(child.acquireAll(List.of(claim)).allowed()).isTrue();
            assertThat(here.acquireAll(List.of(claim)).allowed()).isTrue();
            Decisions refused = child.acquireAll(List.of(claim));
            assertThat(refused.allowed()).isFalse();
            assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(1_000));
            assertThat(child.peek(rule, "k", 1)).isEqualTo(here.peek(rule, "k", 1));

            // A clock move reaches the child: the next window, then a reservation given back.
            clock.advance(1_000);
            child.clockMoved();
            Reservation reservation = child.reserveAll(List.of(claim));
            assertThat(reservation.allowed()).isTrue();
            assertThat(here.peek(rule, "k", 1).remaining()).isEqualTo(1);
            assertThat(reservation.cancel()).containsExactly("r");
            assertThat(here.peek(rule, "k", 1).remaining()).isEqualTo(2);

            // What the child's limiter throws is thrown here as the same, message and all.
            String stateKey = here.stateKey(rule, "k");
            try (Jedis jedis = valkey.connect()) {
                jedis.del(stateKey);
                jedis.lpush(stateKey, "not a state");
            }
            Throwable there = catchAll(() -> child.acquireAll(List.of(claim)));
            Throwable ours = catchAll(() -> here.acquireAll(List.of(claim)));
            assertThat(there).isInstanceOf(UnreadableStateException.class);
            assertThat(RecordingStore.describe(there)).isEqualTo(RecordingStore.describe(ours));
            child.reset(rule, "k");
            assertThat(here.peek(rule, "k", 1).remaining()).isEqualTo(2);
        } finally {
            child.close();
        }
        assertThat(child.process().isAlive()).as("the child after close").isFalse();
        assertThat(child.broken()).isNull();
    }

    @Test
    void aChildThatStopsAnsweringBreaksItsInstanceNamingTheCallAndIsEnded() throws Exception {
        Rule rule = Rule.of("r", Algorithm.FIXED_WINDOW, 2, Duration.ofMillis(1_000));
        ChildLimiter child = ChildLimiter.start(config(null, 500));
        try {
            assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(child.process().pid())).start()
                    .waitFor(10, TimeUnit.SECONDS)).isTrue();
            long began = System.nanoTime();
            assertThatThrownBy(() -> child.acquireAll(List.of(Claim.of(rule, "k", 2))))
                    .isInstanceOf(IllegalStateException.class).isNotInstanceOf(RateLimitException.class)
                    .hasMessageContaining("no answer within 500 ms: waiting for its answer to acquire [r/kx2]");
            assertThat(System.nanoTime() - began).isLessThan(TimeUnit.SECONDS.toNanos(5));
            assertThat(child.broken()).isNotNull();
            assertThat(child.process().onExit().get(10, TimeUnit.SECONDS).isAlive()).as("killed when it broke").isFalse();
            assertThatThrownBy(() -> child.peek(rule, "k", 1)).hasMessageContaining("broke earlier, so not sent: its "
                    + "answer to peek [r/kx1]");
        } finally {
            child.close();
        }
    }

    /**
     * Two children started together are both ready, each a JVM of its own with its own static
     * state; faults armed in one's client reach that one only; calls sent to one from several
     * threads are out at once and each gets its own answer.
     */
    @Test
    void twoChildrenStartTogetherTakeTheirOwnFaultsAndAnswerCallsOutAtOnce() throws Exception {
        valkey.flushAll();
        Rule rule = Rule.of("r", Algorithm.FIXED_WINDOW, 1_000, Duration.ofMillis(60_000));
        long began = System.nanoTime();
        List<ChildLimiter> children = ChildLimiter.start(2, config(null, ChildLimiter.ANSWER_MILLIS));
        try {
            System.out.println("checker: two child JVMs started together in " + (System.nanoTime() - began) / 1_000_000 + " ms");
            assertThat(children.get(0).process().pid()).isNotEqualTo(children.get(1).process().pid());
            assertThat(children.get(0).process().pid()).isNotEqualTo(ProcessHandle.current().pid());

            children.get(1).armResets(1);
            assertThat(children.get(0).acquireAll(List.of(Claim.of(rule, "k", 1))).allowed()).isTrue();
            assertThatThrownBy(() -> children.get(1).acquireAll(List.of(Claim.of(rule, "k", 1))))
                    .isInstanceOf(RateLimitException.class);
            children.get(0).armErrors(1);
            Throwable error = catchAll(() -> children.get(0).acquireAll(List.of(Claim.of(rule, "k", 1))));
            assertThat(error).isNotNull();
            assertThat(RecordingStore.describe(error)).contains("OutOfMemoryError");

            ChildLimiter child = children.get(1);
            List<CompletableFuture<Decision>> peeks = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                long cost = i + 1;
                peeks.add(CompletableFuture.supplyAsync(() -> child.peek(rule, "k", cost)));
            }
            for (int i = 0; i < peeks.size(); i++) {
                assertThat(peeks.get(i).get(20, TimeUnit.SECONDS).allowed()).isTrue();
            }
            assertThat(child.broken()).isNull();
        } finally {
            children.forEach(ChildLimiter::close);
        }
        for (ChildLimiter child : children) {
            assertThat(child.process().isAlive()).as("a child after close").isFalse();
        }
    }

    private ChildLimiter.Config config(ManualClock clock, long answerMillis) {
        return new ChildLimiter.Config(valkey.url(), "ck:harness", 5, 300, clock, true, Map.of(), answerMillis);
    }

    private static Throwable catchAll(Runnable call) {
        try {
            call.run();
            return null;
        } catch (RuntimeException | Error e) {
            return e;
        }
    }
}
