package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.ResilientRateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * An {@link Error} thrown while calling Valkey (by the client: an {@link OutOfMemoryError}
 * reading replies, say) is a failure of that call like any other: the circuit breaker counts
 * it, the request gets its rule's policy, and calls resume as soon as Valkey answers.
 */
@ExtendWith(ValkeyExtension.class)
class ClientErrorTest {

    private static final Rule RULE = Rule.of("errors", Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofHours(1));
    private static final Duration OPEN_FOR = Duration.ofMillis(300);

    private final ValkeyServer valkey;
    private final Faults faults = new Faults();

    ClientErrorTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** The probe that an Error ended left the breaker open for good: Valkey answered, nobody asked it. */
    @Test
    void anErrorInTheProbeFailsTheProbeAndCallsResume() throws Exception {
        try (UnifiedJedis client = faults.redisClient(valkey.url());
             ValkeyRateLimiter valkeyLimiter = ValkeyRateLimiter.builder().client(client)
                     .circuitBreaker(3, OPEN_FOR).build();
             ResilientRateLimiter limiter = ResilientRateLimiter.builder(valkeyLimiter).build()) {
            assertThat(limiter.acquire(RULE, "k").basis()).isEqualTo(Decision.Basis.SHARED);
            for (int i = 0; i < 20 && !valkeyLimiter.isBreakerOpen(); i++) {
                faults.failNextCall(new JedisConnectionException("injected: connection reset"));
                assertThat(limiter.acquire(RULE, "k").basis()).isEqualTo(Decision.Basis.SKIPPED);
            }
            assertThat(valkeyLimiter.isBreakerOpen()).isTrue();
            faults.clear();

            Thread.sleep(OPEN_FOR.toMillis() + 100);
            OutOfMemoryError injected = new OutOfMemoryError("injected into the probe");
            faults.failNextCall(injected);
            Decision[] probe = new Decision[1];
            Throwable thrown = catchThrowable(() -> probe[0] = limiter.acquire(RULE, "k"));

            Thread.sleep(OPEN_FOR.toMillis() + 100);
            Decision after = limiter.acquire(RULE, "k");
            assertThat(after.basis()).as("Valkey answers: calls resume after the failed probe's open period")
                    .isEqualTo(Decision.Basis.SHARED);
            assertThat(valkeyLimiter.isBreakerOpen()).isFalse();
            assertThat(thrown).as("what the probe's Error made the limiter throw, instead of the rule's policy")
                    .isNull();
            assertThat(probe[0].basis()).as("the probe's request, decided by its rule's policy")
                    .isEqualTo(Decision.Basis.SKIPPED);

            // Without the resilient limiter: a failure of the store, the Error as its cause.
            faults.failNextCall(injected);
            assertThat(catchThrowable(() -> valkeyLimiter.acquire(RULE, "k")))
                    .isInstanceOf(RateLimitException.class).hasRootCause(injected);
        }
    }
}
