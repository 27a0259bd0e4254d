package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limiter as code uses it gets what the filter gives a request: each rule's failure
 * policy, the in-process fallback, the deny cache and the metrics events, on a real Valkey and
 * on a port where nobody listens.
 */
@ExtendWith(ValkeyExtension.class)
class ResilientRateLimiterTest {

    private static final Rule RESET_MAILS = Rule.of("reset-mail", Algorithm.SLIDING_LOG, 3, Duration.ofHours(1));
    private static final Rule API = Rule.of("api", Algorithm.TOKEN_BUCKET, 1000, Duration.ofMinutes(1));
    private static final Rule SEARCH = Rule.of("search", Algorithm.GCRA, 1000, Duration.ofMinutes(1));

    private final ValkeyServer valkey;
    private final Map<String, LongAdder> heard = new ConcurrentHashMap<>();
    private final RateLimitListener listener = new RateLimitListener() {
        @Override
        public void onEvent(String rule, Event event) {
            heard.computeIfAbsent(rule + ":" + event, k -> new LongAdder()).increment();
        }
    };

    ResilientRateLimiterTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private ResilientRateLimiter onValkey(String url) {
        return ResilientRateLimiter.builder(ValkeyRateLimiter.builder()
                        .settings(ValkeySettings.of(url).withSocketTimeout(Duration.ofMillis(200))
                                .withConnectTimeout(Duration.ofMillis(200)))
                        .build())
                .policy(RESET_MAILS, FailurePolicy.closed())
                .policy(SEARCH, FailurePolicy.local(Rule.of("search", Algorithm.GCRA, 2, Duration.ofMinutes(1))))
                .listener(listener)
                .build();
    }

    /**
     * Settings for a Valkey meant to answer every call: behind the resilient limiter a call past
     * the default 50 ms (a busy machine) would be decided by a policy, not by the store.
     */
    private static ValkeySettings answering(String url) {
        return ValkeySettings.of(url).withSocketTimeout(Duration.ofSeconds(2)).withConnectTimeout(Duration.ofSeconds(2));
    }

    private long heard(String key) {
        LongAdder adder = heard.get(key);
        return adder == null ? 0 : adder.sum();
    }

    @Test
    void withValkeyUpTheStoreDecidesAndRejectionsAreRememberedLocally() throws Exception {
        try (ResilientRateLimiter limiter = onValkey(valkey.url()); Jedis inspect = valkey.connect()) {
            for (int i = 0; i < 3; i++) {
                Decision decision = limiter.acquire(RESET_MAILS, "user:4182");
                assertThat(decision.allowed()).isTrue();
                assertThat(decision.basis()).isEqualTo(Decision.Basis.SHARED);
            }
            Decision rejected = limiter.acquire(RESET_MAILS, "user:4182");
            assertThat(rejected.allowed()).isFalse();
            List<String> before = scriptStats(inspect);
            Decision replayed = limiter.acquire(RESET_MAILS, "user:4182");
            assertThat(replayed.allowed()).isFalse();
            assertThat(replayed.remaining()).isEqualTo(rejected.remaining());
            assertThat(replayed.retryAfter()).isLessThanOrEqualTo(rejected.retryAfter()).isPositive();
            assertThat(scriptStats(inspect)).as("the deny cache answered, not Valkey").isEqualTo(before).isNotEmpty();
            assertThat(heard("reset-mail:ALLOWED")).isEqualTo(3);
            assertThat(heard("reset-mail:REJECTED")).isEqualTo(2);
        }
    }

    /** The limiter calls Valkey has counted (INFO itself is counted too, so only these lines). */
    private static List<String> scriptStats(Jedis inspect) {
        return inspect.info("commandstats").lines().filter(l -> l.startsWith("cmdstat_fcall"))
                .map(l -> l.replaceAll(",usec=.*", "")).toList();
    }

    @Test
    void withValkeyDownEachRuleGetsItsPolicyAndNothingIsThrown() {
        try (ResilientRateLimiter limiter = onValkey("redis://127.0.0.1:" + ValkeyServer.freePort())) {
            Decision closed = limiter.acquire(RESET_MAILS, "user:4182");
            assertThat(closed.basis()).isEqualTo(Decision.Basis.UNAVAILABLE);
            assertThat(closed.allowed()).isFalse();
            assertThat(closed.retryAfter()).isEqualTo(ResilientRateLimiter.DEFAULT_FAILURE_RETRY_AFTER);

            Decision open = limiter.acquire(API, "user:4182");
            assertThat(open.basis()).isEqualTo(Decision.Basis.SKIPPED);
            assertThat(open.allowed()).isTrue();

            List<Decision> local = List.of(limiter.acquire(SEARCH, "ip:1"), limiter.acquire(SEARCH, "ip:1"),
                    limiter.acquire(SEARCH, "ip:1"));
            assertThat(local).extracting(Decision::basis).containsOnly(Decision.Basis.LOCAL);
            assertThat(local).extracting(Decision::allowed).containsExactly(true, true, false);
            assertThat(local.get(0).limit()).as("the local limit").isEqualTo(2);

            Decisions together = limiter.acquireAll(List.of(Claim.of(API, "ip:2"), Claim.of(RESET_MAILS, "ip:2")));
            assertThat(together.unavailable()).isTrue();
            assertThat(together.allowed()).isFalse();
            assertThat(heard("reset-mail:STORE_ERROR")).isEqualTo(2);
            assertThat(heard("search:FALLBACK")).isEqualTo(3);
        }
    }

    /** The store's retry-after covers the count-rejected rule the rejection charged; recombining must keep it. */
    @Test
    void theStoresRetryAfterSurvivesTheDecisionPath() {
        Rule burst = Rule.of("burst", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(10));
        Rule lockout = Rule.of("lockout", Algorithm.SLIDING_LOG, 2, Duration.ofHours(1)).withCountRejected(true);
        List<Claim> both = List.of(Claim.of(burst, "k"), Claim.of(lockout, "k"));
        try (ResilientRateLimiter limiter = onValkey(valkey.url())) {
            assertThat(limiter.acquireAll(both).allowed()).isTrue();
            Decisions rejected = limiter.acquireAll(both);
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.retryAfter()).as("the lockout the rejection filled, not the 10 s window")
                    .isGreaterThan(Duration.ofMinutes(59));
        }
    }

    /**
     * One caller's state planted unreadable, its rule on a local policy: the request falls to the
     * in-process limit, which rejects after its first; the rules the store decided (a window
     * shared by everyone, an in-flight limit) must then give back what they took, so that the
     * broken key charges nobody else. All or nothing, as one store call is.
     */
    @Test
    void aLocalPolicyThatRejectsAnUnreadableRuleLeavesTheOtherRulesAsTheyWere() throws Exception {
        Rule perUser = Rule.of("per-user", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        Rule everyone = Rule.of("everyone", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1));
        Rule inFlight = Rule.of("in-flight", Algorithm.CONCURRENCY, 3, Duration.ofSeconds(60));
        try (ValkeyRateLimiter store = ValkeyRateLimiter.builder().settings(answering(valkey.url())).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(store)
                     .policy(perUser, FailurePolicy.local(Rule.of("per-user", Algorithm.FIXED_WINDOW, 1,
                             Duration.ofHours(1))))
                     .denyCache(0).build();
             Jedis admin = valkey.connect()) {
            admin.lpush(store.stateKey(perUser, "user:mallory"), "not a window");
            for (boolean reserve : new boolean[] {false, true}) {
                List<Claim> mallory = List.of(Claim.of(perUser, "user:mallory"), Claim.of(everyone, "global"),
                        Claim.of(inFlight, "global"));
                int allowed = 0;
                for (int i = 0; i < 3; i++) {
                    Reservation request = reserve ? limiter.reserveAll(mallory)
                            : Reservation.kept(limiter.acquireAll(mallory));
                    if (request.allowed()) {
                        allowed++;
                        request.commit();
                    }
                    Decision local = request.decisions().all().get(0);
                    assertThat(local.basis()).isEqualTo(Decision.Basis.LOCAL);
                }
                assertThat(allowed).as("the local limit of 1, reserving: %s", reserve).isEqualTo(reserve ? 0 : 1);
            }
            // One request of mallory's counted in the shared window, and it holds its lease
            // (acquired, not reserved); the rejected ones took nothing.
            assertThat(limiter.peek(everyone, "global", 1).remaining()).isEqualTo(4);
            assertThat(limiter.peek(inFlight, "global", 1).remaining()).isEqualTo(2);
        }
    }

    /**
     * The deny cache remembers only rejections that hold until their retry-after: not one of a
     * rule whose reservations may be given back, and none past a reset of the key.
     */
    @Test
    void theDenyCacheForgetsWhatAReservationOrAResetGivesBack() throws Exception {
        Rule daily = Rule.of("daily", Algorithm.FIXED_WINDOW, 1, Duration.ofDays(1));
        try (ResilientRateLimiter limiter = ResilientRateLimiter.builder(ValkeyRateLimiter.builder()
                .settings(answering(valkey.url())).build()).build()) {
            assertThat(limiter.acquire(daily, "reset").allowed()).isTrue();
            assertThat(limiter.acquire(daily, "reset").allowed()).isFalse();
            limiter.reset(daily, "reset");
            assertThat(limiter.acquire(daily, "reset").allowed()).as("its quota is full again").isTrue();

            Reservation held = limiter.reserve(daily, "reserved");
            assertThat(limiter.acquire(daily, "reserved").allowed()).as("the reservation holds the unit").isFalse();
            assertThat(held.cancel()).containsExactly("daily");
            assertThat(limiter.acquire(daily, "reserved").allowed()).as("given back: room again").isTrue();
        }
    }

    /** A refund Valkey cannot take is dropped (reported, never thrown), and not sent again later. */
    @Test
    void aRefundTheStoreCannotTakeIsDroppedNotRetried() throws Exception {
        ValkeyServer own = ValkeyServer.startProcess(List.of());
        try (ResilientRateLimiter limiter = onValkey(own.url())) {
            Reservation sent = limiter.reserve(RESET_MAILS, "user:1");
            assertThat(sent.allowed()).isTrue();
            own.stop();
            assertThat(sent.cancel()).as("nothing given back while Valkey is down").isEmpty();
            assertThat(heard("reset-mail:REFUND_DROPPED")).isEqualTo(1);
            assertThat(heard("reset-mail:REFUNDED")).isZero();

            own.start();
            Thread.sleep(300);
            try (Jedis inspect = own.connect()) {
                assertThat(scriptStats(inspect)).as("no call, refund or other, reached the new server").isEmpty();
            }
            // Once Valkey answers again, giving back works again.
            Reservation after = limiter.reserve(RESET_MAILS, "user:1");
            for (int i = 0; i < 20 && after.decisions().all().get(0).basis() != Decision.Basis.SHARED; i++) {
                Thread.sleep(100);
                after = limiter.reserve(RESET_MAILS, "user:1");
            }
            assertThat(after.decisions().all().get(0).basis()).isEqualTo(Decision.Basis.SHARED);
            assertThat(after.cancel()).containsExactly("reset-mail");
            assertThat(heard("reset-mail:REFUNDED")).isEqualTo(1);
        } finally {
            own.close();
        }
    }
}
