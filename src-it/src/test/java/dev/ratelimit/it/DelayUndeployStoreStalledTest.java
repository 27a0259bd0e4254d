package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An undeploy while Valkey does not answer (CLIENT PAUSE): every held request is answered 503 at
 * once and none runs during the undeploy, whatever the give-backs wait on.
 */
@ExtendWith(ValkeyExtension.class)
class DelayUndeployStoreStalledTest {

    private final ValkeyServer valkey;

    DelayUndeployStoreStalledTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void undeployWithValkeyPaused() throws Exception {
        valkey.start();
        valkey.flushAll();
        Map<String, String> settings = JettyApp.settings(valkey.url(),
                "ratelimit.rules", "api",
                "ratelimit.rule.api.key", "global",
                "ratelimit.rule.api.algorithm", "token-bucket",
                "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "1s",
                "ratelimit.rule.api.max-delay", "7s",
                "ratelimit.valkey.timeout", "500ms",
                "ratelimit.deny-cache.enabled", "false");
        ConcurrentLinkedQueue<DelayJetty.Ran> ran = new ConcurrentLinkedQueue<>();
        DelayJetty.Events events = new DelayJetty.Events();
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        try (DelayJetty app = DelayJetty.start(DelayJetty.props(settings), events, ran, true)) {
            for (int i = 0; i < 40; i++) {
                all.add(app.send("/x"));
            }
            DelayJetty.await(() -> events.count("api", RateLimitListener.Event.DELAYED) >= 30, "30 held");
            Thread.sleep(100);
            valkey.pause(Duration.ofSeconds(20));
            long t = System.nanoTime();
            int ranBefore = ran.size();
            app.undeploy();
            int ranAfter = ran.size();
            System.out.println("app ran " + ranBefore + " before the undeploy, " + (ranAfter - ranBefore)
                    + " during it");
            long undeployMs = (System.nanoTime() - t) / 1_000_000;
            int s503 = 0;
            int s200 = 0;
            for (CompletableFuture<HttpResponse<String>> r : all) {
                int c = r.get().statusCode();
                if (c == 503) s503++;
                if (c == 200) s200++;
            }
            long answeredMs = (System.nanoTime() - t) / 1_000_000;
            System.out.println("undeploy took " + undeployMs + " ms; all answered after " + answeredMs
                    + " ms; 503=" + s503 + " 200=" + s200 + " refunded=" + events.count("api", RateLimitListener.Event.REFUNDED)
                    + " refundDropped=" + events.count("api", RateLimitListener.Event.REFUND_DROPPED));
            assertThat(s503 + s200).isEqualTo(40);
            assertThat(ranAfter - ranBefore).as("no held request runs during the undeploy").isZero();
            assertThat(s200).as("only those that ran").isEqualTo(ranBefore);
        }
    }
}
