package dev.ratelimit.valkey.lease;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.script.Refund;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * When a lease's give-back is worked out and lands, against this instance's own calls on its key
 * (see {@link LeaseReturner#all}), on a clock the test moves. A give-back worked out at one time
 * and landing after a call stamped later had the store charge the refill in between as lost
 * though the call took from it: a reservation on the key was then refused that the same steps
 * without leases allowed (LeaseReservationMixTest, about one run in ten, as the sweeper's thread
 * gave back between the test's steps).
 */
class LeaseGiveBackOrderTest {

    /** One unit a 10 s: a lease of 20 s has a margin of 2 units; a unit is 100,000 ticks. */
    private static final Rule RULE = Rule.tokenBucket("b", 10, Duration.ofSeconds(100), 40);
    private static final LeasePolicy POLICY = new LeasePolicy(4, Duration.ofSeconds(20));
    private static final Claim CLAIM = Claim.of(RULE, "k");
    private static final long UNIT = 100_000;

    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private volatile CountDownLatch landing = new CountDownLatch(0);
    private final Leases leases = new Leases(Map.of("b", POLICY), clock::get, (refunds, now) -> {
        try {
            landing.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sent.add(new Sent(refunds, now));
        events.add("give-back landed");
    });

    private record Sent(List<Refund> refunds, long now) {
    }

    @AfterEach
    void close() {
        landing.countDown();
        leases.close();
    }

    /** A take of the request's unit and a lease of 4 (and its margin of 2), answered with debt generation {@code gen}. */
    private Lease take(long gen) {
        long start = clock.get();
        Verdicts.Answer answer = new Verdicts.Answer(true, 30, 10_000, 10_000, 0, new Undo(start, gen));
        Leases.Taken taken = leases.taken(CLAIM, 1, POLICY, POLICY.size() + POLICY.margin(RULE), answer, start);
        assertThat(taken.lease()).isNotNull();
        return taken.lease();
    }

    private void awaitSent(int count) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sent.size() < count && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertThat(sent).hasSize(count);
    }

    @Test
    void aGiveBackWaitsForItsKeysCallOnItsWayAndTheKeysNextCallWaitsForItToLand() throws Exception {
        take(7);
        // A request's call on the key is on its way: it read its clock, its units are not counted yet.
        List<LeaseEntry> call = leases.writing(List.of(CLAIM));
        clock.addAndGet(25_000);
        leases.sweep(); // the lease is over; what is due goes back on this thread
        assertThat(sent).as("worked out before the call's units are counted, it would miss them").isEmpty();
        // The next give-back is held at the store: the key's calls meanwhile wait for it.
        landing = new CountDownLatch(1);
        leases.written(call);
        CompletableFuture<List<LeaseEntry>> next = CompletableFuture.supplyAsync(() -> {
            List<LeaseEntry> marked = leases.writing(List.of(CLAIM));
            events.add("next call");
            return marked;
        });
        assertThatThrownBy(() -> next.get(300, TimeUnit.MILLISECONDS))
                .as("a call stamped after the give-back's time must not land before it").isInstanceOf(TimeoutException.class);
        landing.countDown();
        leases.written(next.get(10, TimeUnit.SECONDS));
        awaitSent(1);
        assertThat(events).containsExactly("give-back landed", "next call");
        assertThat(sent.get(0).now()).isEqualTo(clock.get());
    }

    @Test
    void aLeaseOfADebtTheBucketRefilledSinceChargesNothingAndLeavesTheNextOnesChargeAlone() throws Exception {
        take(7);
        // Long after, with no sweep in between: the bucket filled, and the next take starts a new
        // debt (generation 8), whose lease replaces the first and ends it.
        clock.addAndGet(200_000);
        take(8);
        clock.addAndGet(25_000);
        leases.sweep();
        awaitSent(1);
        List<Refund> refunds = sent.stream().flatMap(s -> s.refunds().stream()).toList();
        assertThat(refunds).as("the first lease's debt is gone: the store takes nothing back to it").hasSize(1);
        Refund second = refunds.get(0);
        assertThat(second.taken().undo().which()).isEqualTo(8);
        // This instance's bucket held the second take's own unit for 10 s of the lease's 25 s, then
        // lost 15 s of refill: that, not the refill lost while the store's bucket was full too.
        assertThat(second.floor()).isEqualTo(15_000 * RULE.limit());
        assertThat(second.claim().cost()).isEqualTo(POLICY.size() + POLICY.margin(RULE));
        assertThat(second.floor()).isLessThan(second.claim().cost() * UNIT);
    }
}
