package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code cost-from=returned} on a {@code @RateLimited} CDI method, on Weld SE against a real
 * Valkey: each call is admitted by the rule's {@code cost} and charged what it returned, once
 * (a {@code CompletionStage} when it completes); a key in debt is refused, and charged nothing.
 */
@ExtendWith(ValkeyExtension.class)
class CostReturnedTest {

    private final ValkeyServer valkey;

    CostReturnedTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private long counted() {
        return counted("tokens");
    }

    private long counted(String rule) {
        try (Jedis jedis = valkey.connect()) {
            Set<String> keys = jedis.keys("rl:v1:" + rule + ":*");
            return keys.isEmpty() ? 0 : Long.parseLong(jedis.get(keys.iterator().next()).split(":")[1]);
        }
    }

    /** A Jakarta REST resource method: its rule reads a response header, a request attribute or the entity it returned. */
    @Test
    void aResourceMethodIsChargedWhatItsResponseReported() throws Exception {
        java.util.List<String> pairs = new java.util.ArrayList<>(java.util.List.of("ratelimit.rules", "tokens,rows,bytes"));
        for (String[] rule : new String[][] {{"tokens", "header:X-Tokens-Used"}, {"rows", "attribute:tokens"},
                {"bytes", "returned"}}) {
            String p = "ratelimit.rule." + rule[0] + ".";
            pairs.addAll(java.util.List.of(p + "scope", "method", p + "algorithm", "fixed-window", p + "limit", "100",
                    p + "window", "1h", p + "key", "global", p + "cost", "10", p + "cost-from", rule[1]));
        }
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), pairs.toArray(String[]::new)), false,
                Resources.Complete.class)) {
            for (String rule : new String[] {"tokens", "rows", "bytes"}) {
                String path = "/complete/" + switch (rule) {
                    case "tokens" -> "header";
                    case "rows" -> "attribute";
                    default -> "entity";
                };
                assertThat(app.get(path + "?tokens=37").statusCode()).as(rule).isEqualTo(200);
                assertThat(counted(rule)).as(rule).isEqualTo(37);
                assertThat(app.get(path + "?tokens=3").statusCode()).as(rule).isEqualTo(200);
                assertThat(counted(rule)).as(rule).isEqualTo(40);
                assertThat(app.get(path + "?tokens=300").statusCode()).as(rule).isEqualTo(200);
                assertThat(counted(rule)).as(rule + ": into debt").isEqualTo(340);
                assertThat(app.get(path + "?tokens=1").statusCode()).as(rule).isEqualTo(429);
                assertThat(counted(rule)).as(rule + ": a refused call charged nothing").isEqualTo(340);
            }
        }
    }

    @Test
    void eachCallIsChargedWhatItReturned() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "tokens",
                "ratelimit.rule.tokens.scope", "method", "ratelimit.rule.tokens.algorithm", "fixed-window",
                "ratelimit.rule.tokens.limit", "100", "ratelimit.rule.tokens.window", "1h",
                "ratelimit.rule.tokens.key", "global", "ratelimit.rule.tokens.cost", "10",
                "ratelimit.rule.tokens.cost-from", "returned"), false);
             WeldContainer weld = weld(app, CompletionService.class)) {
            CompletionService model = weld.select(CompletionService.class).get();
            model.complete(37);
            assertThat(counted()).isEqualTo(37);
            model.complete(3);
            assertThat(counted()).isEqualTo(40);
            CompletableFuture<Long> done = new CompletableFuture<>();
            model.completeLater(done);
            assertThat(counted()).as("its estimate while it runs").isEqualTo(50);
            done.complete(25L);
            assertThat(counted()).isEqualTo(65);
            model.complete(200);                       // into debt
            assertThat(counted()).isEqualTo(265);
            assertThatThrownBy(() -> model.complete(1)).isInstanceOf(RateLimitExceededException.class);
            assertThat(counted()).as("a refused call is charged nothing").isEqualTo(265);
        }
    }
}
