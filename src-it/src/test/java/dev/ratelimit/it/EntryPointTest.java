package dev.ratelimit.it;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The entry point the README shows first, {@code ResilientRateLimiter.builder(ValkeySettings)},
 * against a real Valkey: it shares the limit, connects only when built, lets go of its
 * connections when closed, and, with Valkey gone, answers by each rule's policy instead of
 * throwing.
 */
@ExtendWith(ValkeyExtension.class)
class EntryPointTest {

    private final ValkeyServer server;

    EntryPointTest(ValkeyServer server) {
        this.server = server;
    }

    @Test
    void theSettingsEntryPointSharesTheLimitAndConnectsOnlyWhenBuilt() {
        Rule mails = Rule.slidingLog("ep-mails", 3, Duration.ofHours(1));
        String key = "user:" + System.nanoTime();
        long before = clients();
        ResilientRateLimiter.Builder unbuilt = ResilientRateLimiter.builder(ValkeySettings.of(server.url()))
                .policy(mails, FailurePolicy.closed());
        assertThat(clients()).as("connections before build()").isEqualTo(before);
        try (RateLimiter one = unbuilt.build();
             RateLimiter two = ResilientRateLimiter.builder(ValkeySettings.of(server.url())).build()) {
            assertThat(one.acquire(mails, key).allowed()).isTrue();
            assertThat(two.acquire(mails, key).allowed()).isTrue();
            Decisions third = one.acquireAll(List.of(Claim.of(mails, key)));
            assertThat(third.allowed()).isTrue();
            assertThat(third.get(0).remaining()).isZero();
            Decision fourth = two.acquire(mails, key);
            assertThat(fourth.allowed()).as("the limit is shared by both").isFalse();
            assertThat(fourth.basis()).isEqualTo(Decision.Basis.SHARED);
            assertThat(one.peek(mails, key).allowed()).isFalse();
            assertThat(clients()).isGreaterThan(before);
        }
        assertThat(clients()).as("connections after close()").isEqualTo(before);
    }

    @Test
    void withValkeyGoneEachRuleIsAnsweredByItsPolicy() {
        Rule open = Rule.fixedWindow("ep-open", 5, Duration.ofMinutes(1));
        Rule closed = Rule.tokenBucket("ep-closed", 5, Duration.ofMinutes(1));
        Rule local = Rule.gcra("ep-local", 5, Duration.ofMinutes(1));
        ValkeySettings nowhere = ValkeySettings.of("redis://127.0.0.1:" + ValkeyServer.freePort())
                .withConnectTimeout(Duration.ofMillis(100));
        try (RateLimiter limiter = ResilientRateLimiter.builder(nowhere)
                .policy(closed, FailurePolicy.closed())
                .policy(local, FailurePolicy.local(Rule.gcra("ep-local", 1, Duration.ofMinutes(1))))
                .build()) {
            assertThat(limiter.acquire(open, "k").basis()).isEqualTo(Decision.Basis.SKIPPED);
            Decision refused = limiter.acquire(closed, "k");
            assertThat(refused.basis()).isEqualTo(Decision.Basis.UNAVAILABLE);
            assertThat(refused.allowed()).isFalse();
            assertThat(limiter.acquire(local, "k").basis()).isEqualTo(Decision.Basis.LOCAL);
            assertThat(limiter.acquire(local, "k").allowed()).as("the per-instance limit of 1").isFalse();
        }
    }

    @Test
    void aValkeyBuilderOfItsOwnIsBuiltWithTheResilientOne() {
        Rule api = Rule.fixedWindow("ep-leased", 10_000, Duration.ofHours(1));
        String key = "k" + System.nanoTime();
        long calls = server.commandCalls("fcall");
        try (RateLimiter limiter = ResilientRateLimiter.builder(ValkeyRateLimiter.builder()
                        .settings(ValkeySettings.of(server.url())).localLease(api, 10, Duration.ofSeconds(30)))
                .build()) {
            for (int i = 0; i < 30; i++) {
                assertThat(limiter.acquire(api, key).allowed()).isTrue();
            }
        }
        // A key is leased from its second request on; thirty take a few leases of ten, not thirty calls.
        assertThat(server.commandCalls("fcall") - calls).as("calls for thirty requests with leases of ten")
                .isLessThan(15);
    }

    private long clients() {
        try (Jedis jedis = server.connect()) {
            // This connection itself is one of them; every count is taken the same way.
            return jedis.clientList().lines().filter(line -> !line.isBlank()).count();
        }
    }
}
