package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that obeys the fields of several rules at once (README, "A client that obeys the
 * fields", with every rule of a request: it sends while every {@code r} is above 0, and at
 * {@code r} = 0 waits the longest {@code t} of the rules that have none left) is never rejected:
 * three rules of different algorithms, windows and bursts on one path, four clients each with its
 * own key, on Jetty and Valkey.
 */
@ExtendWith(ValkeyExtension.class)
class ObeyingSeveralRulesTest {

    private static final List<String> RULES = List.of("swc", "bucket", "fixed");
    private static final Duration SPAN = Duration.ofSeconds(12);

    private final ValkeyServer valkey;

    ObeyingSeveralRulesTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void aClientObeyingEveryRuleIsNeverRejected() throws Exception {
        // Promise 1 (and 2): within t no more than r, and at t more comes, for each rule of a request.
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", String.join(",", RULES),
                "ratelimit.rule.swc.algorithm", "sliding-window-counter", "ratelimit.rule.swc.limit", "5",
                "ratelimit.rule.swc.window", "4s", "ratelimit.rule.swc.key", "header:X-Client",
                "ratelimit.rule.bucket.algorithm", "token-bucket", "ratelimit.rule.bucket.limit", "3",
                "ratelimit.rule.bucket.window", "2s", "ratelimit.rule.bucket.burst", "2",
                "ratelimit.rule.bucket.key", "header:X-Client",
                "ratelimit.rule.fixed.algorithm", "fixed-window", "ratelimit.rule.fixed.limit", "7",
                "ratelimit.rule.fixed.window", "5s", "ratelimit.rule.fixed.key", "header:X-Client");
        List<int[]> outcomes = new ArrayList<>();
        try (JettyApp app = JettyApp.start(settings)) {
            ExecutorService threads = Executors.newFixedThreadPool(4);
            try {
                List<Future<int[]>> clients = new ArrayList<>();
                for (int c = 0; c < 4; c++) {
                    String client = "client-" + c;
                    clients.add(threads.submit(() -> obey(app, client)));
                }
                for (Future<int[]> client : clients) {
                    outcomes.add(client.get());
                }
            } finally {
                threads.shutdownNow();
            }
        }
        for (int[] outcome : outcomes) {
            assertThat(outcome[0]).as("requests allowed").isPositive();
            assertThat(outcome[1]).as("429s for a client obeying every rule's r and t").isZero();
        }
    }

    /** Runs one client for the span; returns {allowed, rejected}. */
    private static int[] obey(JettyApp app, String client) throws Exception {
        long end = System.nanoTime() + SPAN.toNanos();
        int allowed = 0;
        int rejected = 0;
        while (System.nanoTime() - end < 0) {
            HttpResponse<String> response = app.get("/", "X-Client", client);
            long wait = 0;
            if (response.statusCode() == 429) {
                rejected++;
                wait = ClientFields.item(response, "Retry-After");
            } else {
                assertThat(response.statusCode()).isEqualTo(200);
                allowed++;
                for (String rule : RULES) {
                    ObeyedFields fields = ObeyedFields.of(response, rule);
                    if (fields.remaining() == 0) {
                        wait = Math.max(wait, fields.reset());
                    }
                }
            }
            TimeUnit.SECONDS.sleep(wait);
        }
        return new int[] {allowed, rejected};
    }
}
