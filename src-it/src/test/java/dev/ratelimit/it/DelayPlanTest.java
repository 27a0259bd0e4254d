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
 * A token-bucket rule with max-delay and plans: a caller on a plan (a header from a trusted
 * proxy) is held for its slot as a caller without one is, never refused while its slot is within
 * the max delay.
 */
@ExtendWith(ValkeyExtension.class)
class DelayPlanTest {

    private final ValkeyServer valkey;

    DelayPlanTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    private int[] burst(DelayJetty app, int n, String... headers) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(app.send("/api", headers));
        }
        int ok = 0;
        int refused = 0;
        for (CompletableFuture<HttpResponse<String>> r : all) {
            HttpResponse<String> done = r.get();
            if (done.statusCode() == 200) {
                ok++;
            } else {
                refused++;
                System.out.println("refused " + done.statusCode() + " Retry-After="
                        + done.headers().firstValue("Retry-After").orElse("-") + " "
                        + done.headers().firstValue("RateLimit-Policy").orElse("-"));
            }
        }
        return new int[] {ok, refused};
    }

    @Test
    void aCallerOnAPlanIsHeldAsAnyOther() throws Exception {
        valkey.start();
        valkey.flushAll();
        Map<String, String> settings = JettyApp.settings(valkey.url(),
                "ratelimit.rules", "api",
                "ratelimit.rule.api.key", "header:X-K",
                "ratelimit.rule.api.algorithm", "token-bucket",
                "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "1s",
                "ratelimit.rule.api.max-delay", "1s",
                "ratelimit.rule.api.plan", "header:X-Plan",
                "ratelimit.rule.api.plan.pro.limit", "20",
                "ratelimit.trusted-proxies", "127.0.0.1",
                "ratelimit.deny-cache.enabled", "false");
        ConcurrentLinkedQueue<DelayJetty.Ran> ran = new ConcurrentLinkedQueue<>();
        DelayJetty.Events events = new DelayJetty.Events();
        try (DelayJetty app = DelayJetty.start(DelayJetty.props(settings), events, ran, true)) {
            int[] plain = burst(app, 15, "X-K", "plain");
            System.out.println("no plan: ok=" + plain[0] + " refused=" + plain[1] + " delayed="
                    + events.count("api", RateLimitListener.Event.DELAYED));
            int[] pro = burst(app, 25, "X-K", "pro", "X-Plan", "pro");
            System.out.println("plan pro: ok=" + pro[0] + " refused=" + pro[1] + " delayed="
                    + events.count("api", RateLimitListener.Event.DELAYED));
            assertThat(plain[0]).as("no plan: 10 now, 5 held within 1 s").isEqualTo(15);
            assertThat(pro[0]).as("plan pro (20/s): 20 now, 5 held within 250 ms").isEqualTo(25);
        }
    }
}
