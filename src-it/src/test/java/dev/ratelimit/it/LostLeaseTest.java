package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases whose holder never learnt of them: a concurrency rule's call that Valkey ran while
 * its caller had already given up (a stall longer than the socket timeout) took leases no
 * request holds. They must not block the rule until their lease timeout.
 */
@ExtendWith(ValkeyExtension.class)
class LostLeaseTest {

    private final ValkeyServer valkey;

    LostLeaseTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void leasesTakenByCallsWhoseReplyWasLostAreReleasedOnceValkeyAnswersAgain() throws Exception {
        Rule rule = Rule.of("inflight", Algorithm.CONCURRENCY, 3, Duration.ofSeconds(60));
        // A timeout the answered calls meet on a busy machine, and stalls three times as long.
        Duration timeout = Duration.ofMillis(500);
        try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(valkey.url()).withSocketTimeout(timeout)).build()) {
            int lost = 0;
            for (int round = 0; round < 3; round++) {
                CompletableFuture<Void> stall = CompletableFuture.runAsync(() -> valkey.stall(timeout.multipliedBy(3)));
                // Calls until one is sent while the server sleeps: it times out, and the server
                // runs it when it wakes. One that got through before is released at once.
                boolean timedOut = false;
                while (!timedOut && !stall.isDone()) {
                    try {
                        Reservation early = limiter.reserve(rule, "k");
                        early.cancel();
                    } catch (RateLimitException e) {
                        timedOut = true;
                        lost++;
                    }
                }
                stall.get();
            }
            assertThat(lost).as("calls sent into a stall").isEqualTo(3);
            // The calls the server ran on waking have run by now.
            Thread.sleep(200);

            List<Reservation> held = new ArrayList<>();
            int allowed = 0;
            for (int i = 0; i < 4; i++) {
                Reservation reservation = limiter.reserve(rule, "k");
                if (reservation.allowed()) {
                    allowed++;
                    held.add(reservation);
                }
            }
            assertThat(allowed).as("nothing in progress: all three slots, and no more").isEqualTo(3);
            held.forEach(Reservation::cancel);
            assertThat(limiter.peek(rule, "k", 1).remaining()).isEqualTo(3);
        }
    }
}
