package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Reservation;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import redis.clients.jedis.RedisClient;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A limiter instance in a JVM of its own, for the checker's two-JVM target: a
 * {@link ValkeyRateLimiter} built as the checker builds an instance on a single Valkey (its own
 * client pool, from {@link ErrorClient}, whose faults the checker arms; its own leases, lost-lease
 * memory, breaker, and this JVM's static state), answering the calls {@link ChildLimiter} sends
 * it one line at a time on stdin, each answer one line on stdout ({@link ChildLines}).
 *
 * <p>The first line is the limiter's configuration ({@code url}, {@code keyPrefix},
 * {@code breakerFailures}, {@code breakerOpenMs}, {@code clock}: the client clock's start in
 * epoch ms, or absent for Valkey's {@code TIME}; {@code pipelined}; {@code localLeases}); the
 * answer is {@code {"ready":true}}. Then one request per line, {@code do} one of acquire,
 * reserve, cancel (a reservation by the number its reserve answered, the rules to give back by
 * name), peek, reset, clock, arm ({@code resets}, {@code errors}: faults for the client's next
 * commands) and close; on the client clock each carries {@code now}, set on this JVM's clock
 * before the call. Each request runs on a thread of its own, so calls sent together (a crowd's)
 * are out together as they would be in one JVM; the answer carries the request's {@code id} and
 * the call's result, or {@code threw} (what the limiter threw), or {@code broken} (a request
 * this side cannot read: the checker's fault, not the limiter's). The JVM exits when stdin ends:
 * when the checker closes it, or dies.
 */
public final class ChildLimiterMain {

    /** At a close, how long the calls still running are waited for. */
    private static final long CALLS_MILLIS = 5_000;

    private final ErrorClient faults = new ErrorClient();
    private final RedisClient client;
    private final ValkeyRateLimiter limiter;
    /** Null on the server clock. */
    private final ManualClock clock;
    /** Every reservation made, by the number its answer gave, until it is cancelled. */
    private final Map<Long, Reservation> reservations = new ConcurrentHashMap<>();
    private final AtomicLong nextReservation = new AtomicLong(1);

    private ChildLimiterMain(Map<String, Object> config) {
        clock = config.get("clock") == null ? null : new ManualClock(ChildLines.number(config, "clock"));
        client = faults.client((String) config.get("url"));
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                .client(client)
                .keyPrefix((String) config.get("keyPrefix"))
                .circuitBreaker((int) ChildLines.number(config, "breakerFailures"),
                        Duration.ofMillis(ChildLines.number(config, "breakerOpenMs")));
        if (clock != null) {
            builder.clientClock(clock);
        }
        if (!Boolean.TRUE.equals(config.get("pipelined"))) {
            builder.pipelines(0);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> leases = (Map<String, Object>) config.get("localLeases");
        leases.forEach((rule, value) -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> lease = (Map<String, Object>) value;
            @SuppressWarnings("unchecked")
            Map<String, Object> leased = (Map<String, Object>) lease.get("rule");
            builder.localLease(ChildLines.rule(leased), ChildLines.number(lease, "size"),
                    Duration.ofMillis(ChildLines.number(lease, "ms")));
        });
        limiter = builder.build();
    }

    /**
     * Serves the checker until stdin ends or it asks to close.
     *
     * @param args none: the configuration is the first line
     * @throws IOException if stdin cannot be read
     * @throws InterruptedException if interrupted while the last calls finish
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        // The protocol's lines are the only thing on stdout: whatever else prints goes to stderr.
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String first = in.readLine();
        if (first == null) {
            return;
        }
        ChildLimiterMain child = new ChildLimiterMain(JsonReader.object(first));
        answer(out, Json.object().with("ready", true).with("pid", ProcessHandle.current().pid()));
        AtomicInteger threads = new AtomicInteger();
        ExecutorService calls = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "child-call-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Map<String, Object> request;
                try {
                    request = JsonReader.object(line);
                } catch (RuntimeException e) {
                    answer(out, Json.object().with("broken", "cannot read the request " + line + ": " + e));
                    continue;
                }
                if ("close".equals(request.get("do"))) {
                    // Sent when no call is out; any still running is given a moment all the same.
                    calls.shutdown();
                    calls.awaitTermination(CALLS_MILLIS, TimeUnit.MILLISECONDS);
                    answer(out, Json.object().with("id", request.get("id")).with("done", true));
                    break;
                }
                Map<String, Object> call = request;
                String sent = line;
                calls.execute(() -> answer(out, child.serve(call, sent)));
            }
        } finally {
            calls.shutdownNow();
            child.limiter.close();
            child.client.close();
        }
        // The client's pool may hold threads that are not daemons.
        System.exit(0);
    }

    /** One answer, one whole line, whichever call's thread writes it. */
    private static void answer(PrintStream out, Json answer) {
        synchronized (out) {
            out.println(answer);
            out.flush();
        }
    }

    private Json serve(Map<String, Object> request, String line) {
        String what;
        List<Claim> claims;
        // Read whole before the limiter is called: what cannot be read is the checker's fault,
        // never something the limiter threw.
        try {
            what = (String) request.get("do");
            claims = request.get("claims") == null ? List.of() : ChildLines.claims(request.get("claims"));
            if (clock != null && request.get("now") != null) {
                clock.set(ChildLines.number(request, "now"));
            }
        } catch (RuntimeException e) {
            return Json.object().with("id", request.get("id")).with("broken", "cannot read the request " + line + ": " + e);
        }
        Json answer = Json.object().with("id", request.get("id"));
        try {
            switch (what) {
                case "acquire" -> {
                    Decisions decisions = limiter.acquireAll(claims);
                    return answer.with("decisions", ChildLines.decisions(decisions));
                }
                case "reserve" -> {
                    Reservation reservation = limiter.reserveAll(claims);
                    long number = nextReservation.getAndIncrement();
                    reservations.put(number, reservation);
                    return answer.with("reservation", number).with("decisions", ChildLines.decisions(reservation.decisions()));
                }
                case "cancel" -> {
                    Reservation reservation = reservations.remove(ChildLines.number(request, "reservation"));
                    if (reservation == null) {
                        return answer.with("broken", "no reservation " + request.get("reservation"));
                    }
                    Set<String> named = new HashSet<>();
                    for (Object rule : (List<?>) request.get("rules")) {
                        named.add((String) rule);
                    }
                    // As the recording store asks its limiter's reservation: by the rules the
                    // caller's predicate accepted (rule names are unique within a call).
                    return answer.with("given", reservation.cancel(rule -> named.contains(rule.name())));
                }
                case "commit-cost" -> {
                    Reservation reservation = reservations.remove(ChildLines.number(request, "reservation"));
                    if (reservation == null) {
                        return answer.with("broken", "no reservation " + request.get("reservation"));
                    }
                    long actual = ChildLines.number(request, "actual");
                    dev.ratelimit.internal.Refundable.Charged charged =
                            ((dev.ratelimit.internal.Refundable) reservation).settle(rule -> actual);
                    return answer.with("charged", charged.charged()).with("dropped", charged.dropped())
                            .with("given", charged.given()).with("refundDropped", charged.refundDropped());
                }
                case "peek" -> {
                    Claim claim = claims.get(0);
                    Decision decision = limiter.peek(claim.rule(), claim.key(), claim.cost());
                    return answer.with("decision", ChildLines.decision(decision));
                }
                case "reset" -> {
                    Claim claim = claims.get(0);
                    limiter.reset(claim.rule(), claim.key());
                    return answer.with("done", true);
                }
                case "clock" -> {
                    return answer.with("done", true);
                }
                case "arm" -> {
                    faults.armResets((int) ChildLines.number(request, "resets"));
                    faults.armErrors((int) ChildLines.number(request, "errors"));
                    return answer.with("done", true);
                }
                default -> {
                    return answer.with("broken", "unknown request " + what);
                }
            }
        } catch (RuntimeException | Error e) {
            return answer.with("threw", ChildLines.thrown(e));
        }
    }
}
