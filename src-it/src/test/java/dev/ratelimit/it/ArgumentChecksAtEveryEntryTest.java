package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.FailurePolicy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.local.LocalRateLimiter;
import dev.ratelimit.resilient.ResilientRateLimiter;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Every entry of every limiter checks its arguments before anything reaches the store: empty or
 * null claims, a rule named twice, an empty key, a cost out of range (peeks included, whatever the
 * failure policy) are refused, naming the problem, and count nothing.
 */
@ExtendWith(ValkeyExtension.class)
class ArgumentChecksAtEveryEntryTest {

    private final ValkeyServer server;

    ArgumentChecksAtEveryEntryTest(ValkeyServer server) {
        this.server = server;
    }

    private static final Rule TB = Rule.of("cv-tb", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
    private static final Rule FW = Rule.of("cv-fw", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));
    private static final Rule TB_OTHER_LIMIT = Rule.of("cv-tb", Algorithm.TOKEN_BUCKET, 7, Duration.ofMinutes(1));

    private ValkeyRateLimiter valkey(boolean leases) {
        ValkeyRateLimiter.Builder b = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(server.url()).withSocketTimeout(Duration.ofSeconds(2)));
        if (leases) {
            b.localLease(TB, 2, Duration.ofSeconds(5)).localLease(FW, 2, Duration.ofSeconds(5));
        }
        return b.build();
    }

    private long fcalls() {
        return server.commandCalls("fcall") + server.commandCalls("fcall_ro") + server.commandCalls("evalsha")
                + server.commandCalls("eval");
    }

    private long keys() {
        try (Jedis j = server.connect()) {
            return j.dbSize();
        }
    }

    private List<String> check(String name, RateLimiter limiter, boolean store) {
        List<String> problems = new ArrayList<>();
        List<Object[]> cases = new ArrayList<>();
        cases.add(new Object[] {"acquireAll(empty)", (Executable) () -> limiter.acquireAll(List.of()), "claim"});
        cases.add(new Object[] {"reserveAll(empty)", (Executable) () -> limiter.reserveAll(List.of()), "claim"});
        cases.add(new Object[] {"acquireAll(null)", (Executable) () -> limiter.acquireAll(null), "claims"});
        cases.add(new Object[] {"reserveAll(null)", (Executable) () -> limiter.reserveAll(null), "claims"});
        cases.add(new Object[] {"acquireAll([null])", (Executable) () -> limiter.acquireAll(Arrays.asList((Claim) null)), "claim"});
        cases.add(new Object[] {"reserveAll([null])", (Executable) () -> limiter.reserveAll(Arrays.asList((Claim) null)), "claim"});
        cases.add(new Object[] {"acquireAll([c, null])", (Executable) () -> limiter.acquireAll(Arrays.asList(Claim.of(FW, "a"), null)), "claim"});
        cases.add(new Object[] {"reserveAll([c, null])", (Executable) () -> limiter.reserveAll(Arrays.asList(Claim.of(FW, "a"), null)), "claim"});
        cases.add(new Object[] {"acquireAll(same rule twice)", (Executable) () -> limiter.acquireAll(List.of(Claim.of(TB, "a"), Claim.of(TB, "b"))), "cv-tb"});
        cases.add(new Object[] {"reserveAll(same rule twice)", (Executable) () -> limiter.reserveAll(List.of(Claim.of(TB, "a"), Claim.of(TB, "b"))), "cv-tb"});
        cases.add(new Object[] {"acquireAll(same name, other limit)", (Executable) () -> limiter.acquireAll(List.of(Claim.of(TB, "a"), Claim.of(FW, "a"), Claim.of(TB_OTHER_LIMIT, "a"))), "cv-tb"});
        cases.add(new Object[] {"reserveAll(same name, other limit)", (Executable) () -> limiter.reserveAll(List.of(Claim.of(TB, "a"), Claim.of(TB_OTHER_LIMIT, "a"))), "cv-tb"});
        cases.add(new Object[] {"acquireAll(same claim twice)", (Executable) () -> limiter.acquireAll(List.of(Claim.of(FW, "a"), Claim.of(FW, "a"))), "cv-fw"});
        cases.add(new Object[] {"peek(empty key)", (Executable) () -> limiter.peek(TB, "", 1), "key"});
        cases.add(new Object[] {"peek(null key)", (Executable) () -> limiter.peek(TB, null, 1), "key"});
        cases.add(new Object[] {"peek(cost 0)", (Executable) () -> limiter.peek(TB, "a", 0), "cost"});
        cases.add(new Object[] {"peek(cost > capacity)", (Executable) () -> limiter.peek(TB, "a", 6), "cost"});
        cases.add(new Object[] {"peek(null rule)", (Executable) () -> limiter.peek(null, "a", 1), "rule"});
        cases.add(new Object[] {"acquire(cost 0)", (Executable) () -> limiter.acquire(TB, "a", 0), "cost"});
        cases.add(new Object[] {"reset(empty key)", (Executable) () -> limiter.reset(TB, ""), "key"});
        for (Object[] c : cases) {
            long before = store ? fcalls() : 0;
            long keysBefore = store ? keys() : 0;
            Throwable t = catchThrowable(((Executable) c[1])::execute);
            if (!(t instanceof IllegalArgumentException || t instanceof NullPointerException)) {
                Object result = null;
                problems.add(name + " " + c[0] + ": expected IAE/NPE, got " + (t == null ? "no exception" : t.toString()));
                continue;
            }
            String msg = String.valueOf(t.getMessage()).toLowerCase();
            if (!msg.contains(((String) c[2]).toLowerCase())) {
                problems.add(name + " " + c[0] + ": message does not name '" + c[2] + "': " + t);
            }
            if (store) {
                long after = fcalls();
                if (after != before) {
                    problems.add(name + " " + c[0] + ": reached Valkey (" + (after - before) + " function calls)");
                }
                if (keys() != keysBefore) {
                    problems.add(name + " " + c[0] + ": wrote a key");
                }
            }
        }
        return problems;
    }

    @Test
    void everyEntryRefusesBadClaims() {
        server.flushAll();
        List<String> problems = new ArrayList<>();
        try (ValkeyRateLimiter v = valkey(false)) {
            problems.addAll(check("Valkey", v, true));
        }
        try (ValkeyRateLimiter v = valkey(true)) {
            problems.addAll(check("Valkey+leases", v, true));
        }
        try (LocalRateLimiter l = LocalRateLimiter.create()) {
            problems.addAll(check("Local", l, false));
        }
        try (RateLimiter r = ResilientRateLimiter.builder(valkey(false)).build()) {
            problems.addAll(check("Resilient(open)", r, true));
        }
        try (RateLimiter r = ResilientRateLimiter.builder(valkey(true))
                .policy(TB, FailurePolicy.local(TB)).policy(FW, FailurePolicy.closed()).build()) {
            problems.addAll(check("Resilient(local/closed)+leases", r, true));
        }
        // nothing counted: fresh keys are full
        try (ValkeyRateLimiter v = valkey(false)) {
            for (String k : List.of("a", "b")) {
                Decision d = v.peek(TB, k, 1);
                if (d.remaining() != 5) {
                    problems.add("units counted for key " + k + ": remaining " + d.remaining());
                }
                Decision f = v.peek(FW, k, 1);
                if (f.remaining() != 5) {
                    problems.add("units counted for fw key " + k + ": remaining " + f.remaining());
                }
            }
        }
        assertThat(problems).isEmpty();
    }
}
