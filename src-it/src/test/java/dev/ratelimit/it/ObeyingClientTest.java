package dev.ratelimit.it;

import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The promise of the RateLimit field, kept for a client that obeys it (draft-ietf-httpapi-
 * ratelimit-headers-11, "RateLimit Field" and "Client Behavior"): {@code r} units may be used
 * before {@code t} seconds, {@code t} being "the time until additional quota is made available".
 * A client that sends while {@code r > 0}, waits {@code t} at {@code r = 0} and {@code Retry-After}
 * after a 429 ({@link ObeyingClient}) must never get a 429, and must get close to the rule's
 * long-run rate: a {@code t} that is longer than the time until more quota is available makes an
 * obeying client idle while the rule would admit it.
 *
 * <p>Each algorithm has its own rule and path, all on one app, and five clients run at once.
 *
 * <p><b>The numbers.</b> 5 units per 5 s, burst 5 for the buckets. {@code t} is whole seconds,
 * rounded up, so a wait can be up to 1 s longer than the state needs. The unit interval
 * (window / limit) is exactly 1 s, so a {@code t} of "the next unit" is not inflated by the
 * rounding; the window is 5 whole seconds, so rounding a wait for the window's end costs at most
 * a fifth of a window, and it is not lost: every algorithm's state keeps what accrues meanwhile
 * (a bucket up to its burst, the next fixed window whole, a log's entries leaving) for the next
 * wake. A window of a second or less would let the rounding dominate (a 500 ms fixed window told
 * {@code t=1} skips every other window). The span (20 s, {@code -Dobey.seconds=N} for longer
 * measurements) holds several whole cycles of every algorithm.
 *
 * <p><b>Measured</b> per algorithm ({@link ObeyingRun}): the 429s; the rate from the first wake
 * after the initial burst to the first wake after the span, against the time the client itself
 * observed; the {@code t} values seen at {@code r = 0}. Asserted: no 429, and at least 90 % of
 * the rule's own long-run rate, the rate it sustains for a client that sends without pause:
 * {@code limit / window} for every algorithm but the sliding window counter, whose estimate
 * {@code cur + prev × (w − e) / w} settles at the units per window such a client gets, and
 * admits a unit only with one unit of room under it: {@code (limit − 1) / window} (80 % of
 * {@code limit / window} here). When {@code t} was the time until the quota was full (up to
 * {@code 2w} for the counter), its obeying client got half of {@code limit / window}.
 */
@ExtendWith(ValkeyExtension.class)
class ObeyingClientTest {

    private static final List<String> ALGORITHMS =
            List.of("fixed-window", "sliding-log", "sliding-window-counter", "token-bucket", "gcra");
    private static final long LIMIT = 5;
    private static final Duration WINDOW = Duration.ofSeconds(5);
    private static final Duration SPAN = Duration.ofSeconds(Long.getLong("obey.seconds", 20));
    /** Past the span, one more wait: t is at most w, Retry-After at most 2w (a counted rejection). */
    private static final Duration LONGEST = WINDOW.multipliedBy(2).plusSeconds(5);
    private static final double FLOOR = 0.90;

    private final ValkeyServer valkey;

    ObeyingClientTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void aClientThatObeysTheFieldsIsNeverRejectedAndGetsTheRate() throws Exception {
        List<ObeyingRun> runs = new ArrayList<>();
        try (JettyApp app = JettyApp.start(settings())) {
            ExecutorService threads = Executors.newFixedThreadPool(ALGORITHMS.size());
            try {
                List<Future<ObeyingRun>> clients = new ArrayList<>();
                for (String algorithm : ALGORITHMS) {
                    clients.add(threads.submit(() -> ObeyingClient.of(app, "/obey/" + algorithm, algorithm)
                            .run(SPAN, LONGEST)));
                }
                for (Future<ObeyingRun> client : clients) {
                    runs.add(client.get());
                }
            } finally {
                threads.shutdownNow();
            }
        }
        System.out.println(table(runs));
        SoftAssertions softly = new SoftAssertions();
        for (ObeyingRun run : runs) {
            softly.assertThat(run.complete()).as("%s: a wake after the %s span within %s", run.rule(), SPAN, LONGEST)
                    .isTrue();
            softly.assertThat(run.tooMany()).as("%s: 429s for a client that obeys r, t and Retry-After", run.rule())
                    .isZero();
            softly.assertThat(run.rateFraction(sustained(run.rule()), WINDOW))
                    .as("%s: allowed rate / the rule's own long-run rate (%d per %s), %d units in %s, t at r=0 "
                                    + "(t=count) %s", run.rule(), sustained(run.rule()), WINDOW, run.measuredUnits(),
                            run.measuredTime(), run.resetsAtExhaustion())
                    .isGreaterThanOrEqualTo(FLOOR);
        }
        softly.assertAll();
    }

    /**
     * The units per window the rule sustains for a client that sends without pause: its limit,
     * but for the sliding window counter, whose estimate settles at the units per window such a
     * client gets and admits one more only with a unit of room under it.
     */
    private static long sustained(String algorithm) {
        return algorithm.equals("sliding-window-counter") ? LIMIT - 1 : LIMIT;
    }

    /** One rule per algorithm, each on its own path, so each client spends its own quota. */
    private Map<String, String> settings() {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", String.join(",", ALGORITHMS));
        for (String algorithm : ALGORITHMS) {
            String rule = "ratelimit.rule." + algorithm + ".";
            m.put(rule + "match", "/obey/" + algorithm);
            m.put(rule + "algorithm", algorithm);
            m.put(rule + "limit", Long.toString(LIMIT));
            m.put(rule + "window", WINDOW.toSeconds() + "s");
            if (algorithm.equals("token-bucket") || algorithm.equals("gcra")) {
                m.put(rule + "burst", Long.toString(LIMIT));
            }
        }
        return m;
    }

    /** The figures, one line per algorithm. */
    private static String table(List<ObeyingRun> runs) {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
                "obey: %d per %d s, span %d s%n%-23s %5s %6s %6s %8s %6s %6s %6s  %s%n", LIMIT, WINDOW.toSeconds(),
                SPAN.toSeconds(), "algorithm", "429s", "burst", "units", "measured", "rate", "own", "wall",
                "t at r=0 (t=count)"));
        for (ObeyingRun run : runs) {
            // rate: against limit / window; own: against the rule's own long-run rate.
            s.append(String.format(Locale.ROOT, "%-23s %5d %6d %6d %7.2fs %5.1f%% %5.1f%% %5.1fs  %s%n", run.rule(),
                    run.tooMany(), run.initialBurst(), run.measuredUnits(), run.measuredTime().toMillis() / 1000.0,
                    100 * run.rateFraction(LIMIT, WINDOW), 100 * run.rateFraction(sustained(run.rule()), WINDOW),
                    run.wallTime().toMillis() / 1000.0, run.resetsAtExhaustion()));
        }
        return s.toString();
    }
}
