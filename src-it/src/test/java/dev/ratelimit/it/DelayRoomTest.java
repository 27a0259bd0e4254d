package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.max-delayed-requests} counts the requests held, not those being decided: in
 * concurrent bursts of 12 on a bucket of 10 with room for 2, at most 2 need holding, and none is
 * refused.
 */
@ExtendWith(ValkeyExtension.class)
class DelayRoomTest {

    private final ValkeyServer valkey;

    DelayRoomTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void roomIsTakenByRequestsThatAreNotHeld() throws Exception {
        valkey.start();
        valkey.flushAll();
        Map<String, String> settings = JettyApp.settings(valkey.url(),
                "ratelimit.rules", "api",
                "ratelimit.rule.api.key", "header:X-K",
                "ratelimit.rule.api.algorithm", "token-bucket",
                "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "1s",
                "ratelimit.rule.api.max-delay", "1s",
                "ratelimit.max-delayed-requests", "2",
                "ratelimit.deny-cache.enabled", "false");
        ConcurrentLinkedQueue<DelayJetty.Ran> ran = new ConcurrentLinkedQueue<>();
        DelayJetty.Events events = new DelayJetty.Events();
        int totalRefused = 0;
        try (DelayJetty app = DelayJetty.start(DelayJetty.props(settings), events, ran, true)) {
            app.send("/warm", "X-K", "warm").get();
            for (int round = 0; round < 6; round++) {
                List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    all.add(app.send("/api", "X-K", "r" + round));
                }
                int ok = 0;
                for (CompletableFuture<HttpResponse<String>> r : all) {
                    if (r.get().statusCode() == 200) {
                        ok++;
                    }
                }
                System.out.println("round " + round + ": ok=" + ok + " of 12");
                totalRefused += 12 - ok;
            }
            System.out.println("delayed=" + events.count("api", RateLimitListener.Event.DELAYED)
                    + " rejected=" + events.count("api", RateLimitListener.Event.REJECTED));
        }
        assertThat(totalRefused).as("requests refused though at most 2 needed holding at once").isZero();
    }
}
