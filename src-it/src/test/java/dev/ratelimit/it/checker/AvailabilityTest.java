package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Availability} on histories written by hand: a failed store call is flagged unless an
 * injected fault explains it, by time and by instance; a busy machine's timeout never is.
 */
class AvailabilityTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final long OPEN_FOR = 300;
    private static final Rule RULE = Rule.of("r", Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));

    private final List<Event> events = new ArrayList<>();
    private long op;

    /** An acquire of instance 0 whose one store call returned at {@code real}, failed with {@code error} or answered. */
    private void call(long real, String error) {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(RULE, "k"));
        events.add(new Event.Call(id, T0, real, Event.Kind.ACQUIRE, claims, 0));
        events.add(new Event.StoreCall(id, T0, real, "acquire", claims, null,
                error == null ? null : "RateLimitException: acquire failed on Valkey: " + error, null, real, 0));
    }

    private void fault(long real, String kind) {
        events.add(new Event.Fault(++op, T0, real, kind, null, null, null));
    }

    private List<Violation> check() {
        return Availability.check(HandHistory.of(T0, OPEN_FOR, RULE, events));
    }

    @Test
    void aCallFailingWithNoFaultIsFlagged() {
        call(1_000, null);
        call(1_010, "JedisDataException: ERR user_function:42: attempt to compare nil with number");
        assertThat(check()).singleElement().extracting(Violation::invariant).isEqualTo(Availability.INVARIANT);
    }

    @Test
    void aStallExplainsFailuresUntilTheBreakersPeriodAfterIt() {
        fault(1_000, "stall-begin");
        call(1_100, "JedisConnectionException: Unexpected end of stream.");
        fault(1_400, "stall-end");
        call(1_400 + OPEN_FOR, "JedisConnectionException: Unexpected end of stream.");
        assertThat(check()).isEmpty();
        // Long after it, answered calls in between: an error no fault explains.
        call(5_000, null);
        call(5_010, "JedisDataException: ERR unknown command");
        assertThat(check()).singleElement().extracting(Violation::invariant).isEqualTo(Availability.INVARIANT);
    }

    /**
     * A Sentinel failover explains failures from its begin to its end (every instance answered
     * by the new primary) and the breaker's period after; long after it, not.
     */
    @Test
    void aFailoverExplainsFailuresUntilTheInstancesReachedTheNewPrimary() {
        fault(1_000, "failover-begin");
        call(1_100, "JedisDataException: READONLY You can't write against a read only replica.");
        call(2_900, "JedisConnectionException: Unexpected end of stream.");
        events.add(new Event.Fault(++op, T0, 3_000, "failover-end", null, null,
                "primary redis://127.0.0.1:2, formerly redis://127.0.0.1:1"));
        call(3_000 + OPEN_FOR, "JedisDataException: READONLY You can't write against a read only replica.");
        assertThat(check()).isEmpty();
        call(5_000, null);
        call(5_010, "JedisDataException: READONLY You can't write against a read only replica.");
        assertThat(check()).singleElement().extracting(Violation::invariant).isEqualTo(Availability.INVARIANT);
    }

    /** An instance that did not find the new primary by itself is flagged, with no call needed after. */
    @Test
    void anInstanceThatDidNotReachTheNewPrimaryIsFlagged() {
        fault(1_000, "failover-begin");
        events.add(new Event.Fault(++op, T0, 7_000, "failover-end", null, null, "primary redis://127.0.0.1:2, "
                + "formerly redis://127.0.0.1:1; instance 1 did not reach it within 5000 ms"));
        assertThat(check()).singleElement().extracting(Violation::message).asString()
                .startsWith("instance 1 did not reach the new primary within 5000 ms");
    }

    @Test
    void aTimeoutIsABusyMachinesAnywhere() {
        call(1_000, "JedisConnectionException: java.net.SocketTimeoutException: Read timed out");
        call(9_000, "JedisException: Could not get a resource from the pool");
        assertThat(check()).isEmpty();
    }

    @Test
    void aConnectionARestartBrokeMayFailOnceWhenTakenLater() {
        fault(1_000, "restart");
        call(5_000, null);
        call(9_000, "JedisConnectionException: Unexpected end of stream.");
        assertThat(check()).isEmpty();
    }
}
