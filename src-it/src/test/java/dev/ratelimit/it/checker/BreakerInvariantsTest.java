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
 * The circuit breaker's promises and the limiter's contract on histories written by hand: each
 * flags what it forbids, and nothing that a failure within open-for or a probe out explains.
 */
class BreakerInvariantsTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final long OPEN_FOR = 300;
    private static final Rule RULE = Rule.of("r", Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
    private static final String REFUSED = "NotAttempted: peek not attempted: the circuit breaker for Valkey is open";

    private final List<Event> events = new ArrayList<>();
    private long op;

    /** A peek whose one command was sent at {@code began} and returned at {@code real}. */
    private void sent(long began, long real, String error) {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(RULE, "k"));
        events.add(new Event.Call(id, T0, began, Event.Kind.PEEK, claims, 0));
        events.add(new Event.Wire(id, T0, real, began, 0, "FCALL", error));
        events.add(new Event.StoreCall(id, T0, real, "peek", claims, null, error == null ? null
                : "RateLimitException: " + error, null, began, 0));
    }

    /** A peek the breaker refused: nothing sent. */
    private void refused(long at) {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(RULE, "k"));
        events.add(new Event.Call(id, T0, at, Event.Kind.PEEK, claims, 0));
        events.add(new Event.StoreCall(id, T0, at, "peek", claims, null, REFUSED, null, at, 0));
        events.add(new Event.Failed(id, T0, at, REFUSED, null));
    }

    private List<Violation> check() {
        return Invariants.check(HandHistory.of(T0, OPEN_FOR, RULE, events));
    }

    @Test
    void aBreakerStillRefusingLongAfterTheLastFailureIsStuckOpen() {
        sent(1_000, 1_050, "JedisConnectionException: read timed out");
        refused(1_100);
        refused(1_340);
        assertThat(check()).as("within open-for of the failure").isEmpty();
        refused(1_400);
        assertThat(check()).singleElement().extracting(Violation::invariant).asString()
                .contains("once open-for has passed");
    }

    @Test
    void aRefusalWhileACommandIsOutIsNoFault() {
        sent(1_000, 1_050, "JedisConnectionException: read timed out");
        refused(1_100);
        // A crowd's call may be refused while another thread's probe, sent before, is still out.
        sent(1_400, 1_450, "OutOfMemoryError: injected");
        refused(1_420);
        assertThat(check()).isEmpty();
    }

    @Test
    void twoCommandsLetThroughWhileOpenAndOutTogetherAreTwoProbes() {
        sent(1_000, 1_050, "JedisConnectionException: read timed out");
        refused(1_100);
        sent(1_310, 1_360, "JedisConnectionException: read timed out");
        assertThat(check()).as("one probe").isEmpty();
        sent(1_320, 1_370, "JedisConnectionException: read timed out");
        assertThat(check()).singleElement().extracting(Violation::invariant).asString()
                .contains("one probe out at a time");
    }

    @Test
    void anErrorReachingTheCallerBreaksTheContract() {
        long id = ++op;
        List<Claim> claims = List.of(Claim.of(RULE, "k"));
        events.add(new Event.Call(id, T0, 0, Event.Kind.ACQUIRE, claims, 0));
        events.add(new Event.Failed(id, T0, 0, "OutOfMemoryError: injected", null));
        // No fault explains it either: availability flags it too.
        assertThat(check()).extracting(Violation::invariant)
                .anySatisfy(invariant -> assertThat(invariant).contains("only RateLimitException"))
                .anySatisfy(invariant -> assertThat(invariant).startsWith("availability"));
    }
}
