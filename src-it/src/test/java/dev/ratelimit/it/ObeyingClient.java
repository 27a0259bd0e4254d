package dev.ratelimit.it;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A client that does what the RateLimit fields tell it (draft-ietf-httpapi-ratelimit-headers-11,
 * "Client Behavior"): it sends the next request at once while the last response's {@code r} is
 * above 0; when {@code r} is 0 it waits {@code t} seconds, as given; after a 429 it waits
 * {@code Retry-After}, which takes precedence. It never sends early and never guesses.
 *
 * <p>It runs for a fixed real-time span and then until its next wait is over: the request it
 * sends after that wait marks the end of the measured interval (see {@link ObeyingRun}), so the
 * measure does not depend on where in a wait the span happened to end.
 */
final class ObeyingClient {

    private final JettyApp app;
    private final String path;
    private final String rule;

    private ObeyingClient(JettyApp app, String path, String rule) {
        this.app = app;
        this.path = path;
        this.rule = rule;
    }

    /**
     * A client of one rule of the app.
     *
     * @param app  the app
     * @param path the path the rule matches
     * @param rule the rule's name, whose item of the field the client reads
     */
    static ObeyingClient of(JettyApp app, String path, String rule) {
        return new ObeyingClient(app, path, rule);
    }

    /**
     * Runs the client.
     *
     * @param span     how long it sends before it looks for its last wait's end
     * @param longest  the longest a wait may run past the span before the run is given up as
     *                 incomplete (a wait longer than any the rule can justify)
     * @return every exchange, in order
     */
    ObeyingRun run(Duration span, Duration longest) throws Exception {
        List<ObeyingRun.Exchange> exchanges = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + span.toNanos();
        long giveUp = end + longest.toNanos();
        boolean afterWait = false;
        while (true) {
            long sent = System.nanoTime();
            HttpResponse<String> response = app.get(path);
            long received = System.nanoTime();
            ObeyedFields fields = ObeyedFields.of(response, rule);
            exchanges.add(new ObeyingRun.Exchange(sent - start, received - start, response.statusCode(), fields, afterWait));
            if (afterWait && sent - end >= 0) {
                return new ObeyingRun(rule, exchanges, true);
            }
            long waitSeconds = waitSeconds(response.statusCode(), fields);
            if (received + TimeUnit.SECONDS.toNanos(waitSeconds) - giveUp > 0) {
                return new ObeyingRun(rule, exchanges, false);
            }
            afterWait = response.statusCode() == 429 || fields.remaining() == 0;
            TimeUnit.SECONDS.sleep(waitSeconds);
        }
    }

    /** What the response tells the client to wait before its next request. */
    private long waitSeconds(int status, ObeyedFields fields) {
        if (status == 429) {
            return fields.retryAfter().orElseThrow(() -> new AssertionError("a 429 without Retry-After for " + rule));
        }
        if (status != 200) {
            throw new AssertionError("status " + status + " for " + rule + ": neither the app's 200 nor a 429");
        }
        return fields.remaining() > 0 ? 0 : fields.reset();
    }
}
