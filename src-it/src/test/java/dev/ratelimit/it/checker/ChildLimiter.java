package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * A limiter instance in another JVM, called as if it were here: each call is sent to a child
 * process ({@link ChildLimiterMain}, started from the test class path) as one line, and its
 * answer (decisions, a reservation to cancel later, a peek's decision, a reset done, or what the
 * call threw) comes back as one line ({@link ChildLines}). On the client clock each call carries
 * the clock's time, set on the child's clock before it runs, and every clock move is sent too;
 * on the server clock the child reads Valkey's {@code TIME} as any instance does.
 *
 * <p>Every exchange waits at most {@link #ANSWER_MILLIS} (the start {@link #START_MILLIS}); a
 * child that does not answer in time, exits, or cannot read what it was sent breaks this
 * instance: the call throws an {@link IllegalStateException} naming what it waited for (not a
 * {@code RateLimitException}: it is the checker's failure, not the limiter's), every later call
 * throws the same at once, and the run stops ({@link Target#checkChild}). {@link #close} always
 * ends the process, by force when it does not exit.
 */
final class ChildLimiter implements RateLimiter {

    /** The JVM's start and the limiter's build, on a busy two-core machine. */
    static final long START_MILLIS = 60_000;
    /**
     * One call's answer: the limiter's own calls are bounded by its 50 ms socket timeout, a
     * stall's 300 ms, and lost leases released before a call; far more is a child that hangs.
     */
    static final long ANSWER_MILLIS = 10_000;
    /** After a close, how long the child has to exit before it is killed. */
    private static final long EXIT_MILLIS = 5_000;
    /** Lines of the child's stderr kept for the message of a failure. */
    private static final int STDERR_LINES = 30;
    /** What the reader puts in the queue when the child's stdout ends. */
    private static final String END = "\u0000end";

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Deque<String> stderr = new ArrayDeque<>();
    private final Writer requests;
    /** The client clock, null on the server clock. */
    private final LongSupplier clientClock;
    /** How long a call's answer is waited for: {@link #ANSWER_MILLIS}, shorter in the harness's own test. */
    private final long answerMillis;
    private long nextId = 1;
    /** What broke this instance, once something did. */
    private volatile IllegalStateException broken;

    /** A {@code RateLimitException} the child threw, keeping its class's name for the history. */
    static final class Thrown extends RateLimitException implements FromChild {
        private static final long serialVersionUID = 1L;
        private final String className;

        Thrown(String className, String message) {
            super(message, null);
            this.className = className;
        }

        @Override
        public String className() {
            return className;
        }
    }

    /**
     * Anything else the child threw (an Error, another RuntimeException): thrown here as a
     * RuntimeException that keeps its class's name, which breaks the limiter's contract in the
     * history as the same thrown here does.
     */
    static final class ThrownOther extends RuntimeException implements FromChild {
        private static final long serialVersionUID = 1L;
        private final String className;

        ThrownOther(String className, String message) {
            super(message, null);
            this.className = className;
        }

        @Override
        public String className() {
            return className;
        }
    }

    /** What a call in the child threw, as its class's simple name there. */
    interface FromChild {
        String className();
    }

    private ChildLimiter(Process process, LongSupplier clientClock, long answerMillis) {
        this.process = process;
        this.clientClock = clientClock;
        this.answerMillis = answerMillis;
        this.requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread out = new Thread(() -> read(new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)), true), "checker-child-stdout-" + process.pid());
        Thread err = new Thread(() -> read(new BufferedReader(new InputStreamReader(process.getErrorStream(),
                StandardCharsets.UTF_8)), false), "checker-child-stderr-" + process.pid());
        out.setDaemon(true);
        err.setDaemon(true);
        out.start();
        err.start();
    }

    /**
     * Starts a child JVM with a limiter on the same Valkey, key prefix and breaker settings as
     * the instance in this JVM, built from the limiter's own settings (its own client pool), and
     * waits until it is ready.
     *
     * @param url             the Valkey server
     * @param keyPrefix       the key prefix every instance uses
     * @param breakerFailures consecutive failures that open the breaker
     * @param breakerOpenMs   how long it stays open
     * @param clientClock     the client clock to follow, or null for Valkey's {@code TIME}
     * @param pipelined       whether concurrent calls may share a pipeline
     * @param localLeases     the rules whose units it leases ahead
     * @return the instance, ready
     * @throws IllegalStateException if the child did not start; it is killed then
     */
    static ChildLimiter start(String url, String keyPrefix, int breakerFailures, long breakerOpenMs,
                              LongSupplier clientClock, boolean pipelined, Map<String, Workload.LocalLease> localLeases) {
        return start(url, keyPrefix, breakerFailures, breakerOpenMs, clientClock, pipelined, localLeases, ANSWER_MILLIS);
    }

    /** As above, each call's answer waited for at most {@code answerMillis}. */
    static ChildLimiter start(String url, String keyPrefix, int breakerFailures, long breakerOpenMs,
                              LongSupplier clientClock, boolean pipelined, Map<String, Workload.LocalLease> localLeases,
                              long answerMillis) {
        Process process;
        try {
            // A small heap, the serial collector and the first compiler tier: the child answers
            // one call at a time on a machine of two cores that the checker's JVM shares.
            process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), ChildLimiterMain.class.getName()).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the child JVM: " + e, e);
        }
        ChildLimiter child = new ChildLimiter(process, clientClock, answerMillis);
        Map<String, Object> leases = new TreeMap<>();
        localLeases.forEach((rule, lease) -> leases.put(rule, Map.of("size", lease.size(), "ms", lease.millis())));
        Json config = Json.object().with("url", url).with("keyPrefix", keyPrefix).with("breakerFailures", breakerFailures)
                .with("breakerOpenMs", breakerOpenMs).with("clock", clientClock == null ? null : clientClock.getAsLong())
                .with("pipelined", pipelined).with("localLeases", leases);
        try {
            Map<String, Object> ready = child.exchange(config, null, "its start (the limiter built and ready)", START_MILLIS);
            if (!Boolean.TRUE.equals(ready.get("ready"))) {
                throw child.broke("it answered its start with " + ready, null);
            }
        } catch (RuntimeException e) {
            child.close();
            throw e;
        }
        return child;
    }

    /** Reads the child's stdout into the queue, or keeps the last lines of its stderr. */
    private void read(BufferedReader reader, boolean answers) {
        try (reader) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                if (answers) {
                    lines.add(line);
                } else {
                    synchronized (stderr) {
                        stderr.addLast(line);
                        if (stderr.size() > STDERR_LINES) {
                            stderr.removeFirst();
                        }
                    }
                }
            }
        } catch (IOException e) {
            // The process was killed: the end is said below.
        } finally {
            if (answers) {
                lines.add(END);
            }
        }
    }

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        return ChildLines.decisions(call("acquire", claims).get("decisions"));
    }

    @Override
    public Reservation reserveAll(List<Claim> claims) {
        Map<String, Object> answer = call("reserve", claims);
        long number = ChildLines.number(answer, "reservation");
        return Reservation.of(ChildLines.decisions(answer.get("decisions")), which -> giveBack(number, claims, which));
    }

    /**
     * Cancels the child's reservation for the rules the predicate accepts, by name: the predicate
     * is asked here, of the rules sent, as the child's reservation would ask it of the same rules.
     */
    private List<String> giveBack(long number, List<Claim> claims, Predicate<Rule> which) {
        List<String> rules = claims.stream().map(Claim::rule).filter(which).map(Rule::name).distinct().toList();
        Map<String, Object> answer = call(request("cancel").with("reservation", number).with("rules", rules),
                "cancel of reservation " + number + " for " + rules);
        return ((List<?>) answer.get("given")).stream().map(String.class::cast).toList();
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        return ChildLines.decision(call("peek", List.of(Claim.of(rule, key, cost))).get("decision"));
    }

    @Override
    public void reset(Rule rule, String key) {
        call("reset", List.of(Claim.of(rule, key)));
    }

    /** The client clock moved: the child's clock is set to it at once, as one clock both instances read. */
    void clockMoved() {
        call(request("clock"), "the clock set to " + clientClock.getAsLong());
    }

    private Map<String, Object> call(String kind, List<Claim> claims) {
        for (Claim claim : claims) {
            // What the child reads back must be the very rule: a component lost on the way
            // would make it decide another rule than the history records.
            Rule read = ChildLines.rule(JsonReader.object(ChildLines.rule(claim.rule()).toString()));
            if (!read.equals(claim.rule())) {
                throw broke("rule " + claim.rule() + " would reach it as " + read, null);
            }
        }
        return call(request(kind).with("claims", ChildLines.claims(claims)), kind + " " + claims.stream()
                .map(c -> c.rule().name() + "/" + c.key() + "x" + c.cost()).toList());
    }

    private Json request(String kind) {
        return Json.object().with("do", kind).with("now", clientClock == null ? null : clientClock.getAsLong());
    }

    /** Sends a request and returns its answer, or throws what the child's call threw. */
    private synchronized Map<String, Object> call(Json request, String what) {
        long id = nextId++;
        Map<String, Object> answer = exchange(request.with("id", id), id, "its answer to " + what + " (request " + id + ")",
                answerMillis);
        if (answer.get("threw") instanceof Map<?, ?> thrown) {
            @SuppressWarnings("unchecked")
            Map<String, Object> fields = (Map<String, Object>) thrown;
            throw ChildLines.thrown(fields);
        }
        return answer;
    }

    /**
     * One line out, one line back within {@code millis} (the answer to request {@code id}, when
     * given); anything else breaks this instance.
     */
    private Map<String, Object> exchange(Json request, Long id, String waitingFor, long millis) {
        if (broken != null) {
            throw new IllegalStateException("the child JVM broke earlier, so not sent: " + waitingFor, broken);
        }
        String line;
        try {
            requests.write(request + "\n");
            requests.flush();
            line = lines.poll(millis, TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            throw broke("could not send it the request for " + waitingFor, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw broke("interrupted while waiting for " + waitingFor, e);
        }
        if (line == null) {
            throw broke("no answer within " + millis + " ms: waiting for " + waitingFor, null);
        }
        if (line.equals(END)) {
            lines.add(END);
            throw broke("its output ended (exit code " + exitCode() + ") while waiting for " + waitingFor, null);
        }
        Map<String, Object> answer;
        try {
            answer = JsonReader.object(line);
        } catch (IllegalArgumentException e) {
            throw broke("it answered " + waitingFor + " with a line that is not the protocol's: " + line, e);
        }
        if (answer.get("broken") != null) {
            throw broke("it could not read the request for " + waitingFor + ": " + answer.get("broken"), null);
        }
        if (id != null && !(answer.get("id") instanceof Number n && n.longValue() == id)) {
            throw broke("it answered request " + answer.get("id") + " while waiting for " + waitingFor, null);
        }
        return answer;
    }

    private String exitCode() {
        try {
            return process.waitFor(1, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "none yet";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** This instance is broken from now on: the child is killed, and the failure names what was waited for. */
    private IllegalStateException broke(String what, Throwable cause) {
        String tail;
        synchronized (stderr) {
            tail = String.join("\n    ", stderr);
        }
        IllegalStateException failure = new IllegalStateException("the child JVM (pid " + process.pid()
                + ") of the two-JVM target failed: " + what
                + (tail.isEmpty() ? "" : "\n  its last lines on stderr:\n    " + tail), cause);
        if (broken == null) {
            broken = failure;
        }
        process.destroyForcibly();
        return failure;
    }

    /**
     * The child's process.
     *
     * @return its handle
     */
    ProcessHandle process() {
        return process.toHandle();
    }

    /**
     * What broke this instance, if anything did.
     *
     * @return the failure, or null
     */
    IllegalStateException broken() {
        return broken;
    }

    /** Asks the child to close its limiter and exit; kills it if it does not within {@link #EXIT_MILLIS}. */
    @Override
    public void close() {
        try {
            if (broken == null && process.isAlive()) {
                try {
                    exchange(Json.object().with("do", "close").with("id", 0), 0L, "its close", EXIT_MILLIS);
                } catch (IllegalStateException e) {
                    // Killed below all the same; the run's result stands as the invariants found it.
                }
            }
            if (!process.waitFor(EXIT_MILLIS, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly();
                try {
                    process.waitFor(EXIT_MILLIS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                requests.close();
            } catch (IOException e) {
                // The process is gone: nothing to flush to.
            }
        }
    }
}
