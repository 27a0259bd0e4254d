package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;

/**
 * A separate JVM that takes leases of a concurrency rule, prints {@code held <n>}, and then
 * waits to be killed without releasing them: an instance that dies mid-request.
 *
 * <p>Arguments: url rule-name limit lease-timeout-ms leases key
 */
public final class LeaseHoldingProcess {

    private LeaseHoldingProcess() {
    }

    public static void main(String[] args) throws Exception {
        Rule rule = Rule.of(args[1], Algorithm.CONCURRENCY, Long.parseLong(args[2]),
                Duration.ofMillis(Long.parseLong(args[3])));
        int leases = Integer.parseInt(args[4]);
        ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(args[0]).withSocketTimeout(Duration.ofSeconds(2))).build();
        int held = 0;
        for (int i = 0; i < leases; i++) {
            Reservation lease = limiter.reserve(rule, args[5]);
            held += lease.allowed() ? 1 : 0;
        }
        System.out.println("held " + held);
        System.out.flush();
        Thread.sleep(60_000);
    }
}
