package dev.ratelimit.it.checker;

import dev.ratelimit.internal.Refundable;
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
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * A limiter instance in another JVM, called as if it were here: each call is sent to a child
 * process ({@link ChildLimiterMain}, started from the test class path) as one line, and its
 * answer (decisions, a reservation to cancel later, a peek's decision, a reset done, or what the
 * call threw) comes back as one line ({@link ChildLines}), matched to its call by the request's
 * number, so that calls from several threads (a crowd's) are out at once. On the client clock
 * each call carries the clock's time, set on the child's clock before it runs, and every clock
 * move is sent too; on the server clock the child reads Valkey's {@code TIME} as any instance
 * does. Faults are armed in the child's client as in an {@link ErrorClient} here.
 *
 * <p>Every exchange waits at most {@link #ANSWER_MILLIS} (the start {@link #START_MILLIS}); a
 * child that does not answer in time, exits, or cannot read what it was sent breaks this
 * instance: the call throws an {@link IllegalStateException} naming what it waited for (not a
 * {@code RateLimitException}: it is the checker's failure, not the limiter's), every later call
 * throws the same at once, and the run stops ({@link Target#checkChild}). {@link #close} always
 * ends the process, by force when it does not exit.
 */
final class ChildLimiter implements RateLimiter, ClientFaults {

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

    private final Process process;
    /** Which instance of the run it is, for the messages. */
    private final int instance;
    private final Deque<String> stderr = new ArrayDeque<>();
    private final Writer requests;
    /** The client clock, null on the server clock. */
    private final LongSupplier clientClock;
    /** How long a call's answer is waited for: {@link #ANSWER_MILLIS}, shorter in the harness's own test. */
    private final long answerMillis;
    private final AtomicLong nextId = new AtomicLong(1);
    /** The calls out, by request number, until their answer is read. */
    private final Map<Long, CompletableFuture<Map<String, Object>>> waiting = new ConcurrentHashMap<>();
    /** The child's answer to its configuration. */
    private final CompletableFuture<Map<String, Object>> ready = new CompletableFuture<>();
    /** What broke this instance, once something did. */
    private volatile IllegalStateException broken;
    /** Closed here: its output ending is then no failure. */
    private volatile boolean closed;

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

    private ChildLimiter(Process process, int instance, LongSupplier clientClock, long answerMillis) {
        this.process = process;
        this.instance = instance;
        this.clientClock = clientClock;
        this.answerMillis = answerMillis;
        this.requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread out = new Thread(() -> answers(new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))), "checker-child-stdout-" + process.pid());
        Thread err = new Thread(() -> keepStderr(new BufferedReader(new InputStreamReader(process.getErrorStream(),
                StandardCharsets.UTF_8))), "checker-child-stderr-" + process.pid());
        out.setDaemon(true);
        err.setDaemon(true);
        out.start();
        err.start();
    }

    /**
     * What a child's limiter is built with: the same Valkey, key prefix, breaker, clock,
     * pipelining and leases as an instance in this JVM.
     *
     * @param url             the Valkey server
     * @param keyPrefix       the key prefix every instance uses
     * @param breakerFailures consecutive failures that open the breaker
     * @param breakerOpenMs   how long it stays open
     * @param clientClock     the client clock to follow, or null for Valkey's {@code TIME}
     * @param pipelined       whether concurrent calls may share a pipeline
     * @param localLeases     the rules whose units it leases ahead
     * @param answerMillis    how long each call's answer is waited for
     */
    record Config(String url, String keyPrefix, int breakerFailures, long breakerOpenMs, LongSupplier clientClock,
                  boolean pipelined, Map<Rule, Workload.LocalLease> localLeases, long answerMillis) {
    }

    /**
     * Starts a child JVM with a limiter and waits until it is ready.
     *
     * @param config what its limiter is built with
     * @return the instance, ready
     * @throws IllegalStateException if the child did not start; it is ended then
     */
    static ChildLimiter start(Config config) {
        return start(1, config).get(0);
    }

    /**
     * Starts {@code count} child JVMs at once, each with a limiter of its own built alike, and
     * waits until every one is ready: their starts overlap, so the wait is about one start's.
     *
     * @param count  how many, the instances 0 to count - 1
     * @param config what each one's limiter is built with
     * @return the instances, ready, in order
     * @throws IllegalStateException if one did not start; every one started is ended then
     */
    static List<ChildLimiter> start(int count, Config config) {
        List<ChildLimiter> children = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                children.add(launch(i, config));
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_MILLIS);
            for (ChildLimiter child : children) {
                child.awaitReady(deadline);
            }
        } catch (RuntimeException | Error e) {
            for (ChildLimiter child : children) {
                try {
                    child.close();
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
        return children;
    }

    /** Starts the process and sends it its configuration, without waiting for its answer. */
    private static ChildLimiter launch(int instance, Config config) {
        Process process;
        try {
            // A small heap, the serial collector and the first compiler tier: the child answers
            // a few calls at a time on a machine of two cores that the checker's JVM shares.
            process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), ChildLimiterMain.class.getName()).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the child JVM of instance " + instance + ": " + e, e);
        }
        ChildLimiter child = new ChildLimiter(process, instance, config.clientClock(), config.answerMillis());
        Map<String, Object> leases = new TreeMap<>();
        config.localLeases().forEach((rule, lease) -> leases.put(rule.name(), Json.object().with("size", lease.size())
                .with("ms", lease.millis()).with("rule", Event.ruleJson(rule))));
        Json line = Json.object().with("url", config.url()).with("keyPrefix", config.keyPrefix())
                .with("breakerFailures", config.breakerFailures()).with("breakerOpenMs", config.breakerOpenMs())
                .with("clock", config.clientClock() == null ? null : config.clientClock().getAsLong())
                .with("pipelined", config.pipelined()).with("localLeases", leases);
        try {
            child.send(line);
        } catch (IOException e) {
            RuntimeException failure = child.broke("could not send it its configuration", e);
            child.close();
            throw failure;
        }
        return child;
    }

    /** Waits for the answer to the configuration, until the deadline (System.nanoTime). */
    private void awaitReady(long deadline) {
        String waitingFor = "its start (the limiter built and ready)";
        long millis = Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        Map<String, Object> answer = await(ready, waitingFor, millis, START_MILLIS);
        if (!Boolean.TRUE.equals(answer.get("ready"))) {
            throw broke("it answered its start with " + answer, null);
        }
    }

    /** Reads the child's answers and hands each to the call waiting for it. */
    private void answers(BufferedReader reader) {
        try (reader) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                answer(line);
            }
        } catch (IOException e) {
            // The process was killed: the end is said below.
        }
        if (!closed) {
            broke("its output ended (exit code " + exitCode() + ")", null);
        }
        // Nothing is out after a close; anything still waiting learns that no answer comes.
        IllegalStateException ended = new IllegalStateException("the child JVM of instance " + instance + " (pid "
                + process.pid() + ") ended");
        waiting.values().forEach(call -> call.completeExceptionally(ended));
        ready.completeExceptionally(ended);
    }

    private void answer(String line) {
        Map<String, Object> answer;
        try {
            answer = JsonReader.object(line);
        } catch (IllegalArgumentException e) {
            broke("it wrote a line that is not the protocol's: " + line, e);
            return;
        }
        if (answer.get("ready") != null) {
            ready.complete(answer);
            return;
        }
        CompletableFuture<Map<String, Object>> call = answer.get("id") instanceof Number n
                ? waiting.remove(n.longValue()) : null;
        if (call != null) {
            call.complete(answer);
        } else if (answer.get("broken") != null) {
            broke("it could not read a request: " + answer.get("broken"), null);
        } else {
            broke("it answered request " + answer.get("id") + ", which no call waits for: " + line, null);
        }
    }

    /** Keeps the last lines of the child's stderr, for the message of a failure. */
    private void keepStderr(BufferedReader reader) {
        try (reader) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                synchronized (stderr) {
                    stderr.addLast(line);
                    if (stderr.size() > STDERR_LINES) {
                        stderr.removeFirst();
                    }
                }
            }
        } catch (IOException e) {
            // The process was killed.
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
        return Refundable.of(ChildLines.decisions(answer.get("decisions")), which -> giveBack(number, claims, which),
                actual -> settle(number, claims, actual));
    }

    /** Settles the child's reservation by a cost known after the work: one cost, the checker's, for every rule. */
    private Refundable.Charged settle(long number, List<Claim> claims, java.util.function.ToLongFunction<Rule> actual) {
        long cost = actual.applyAsLong(claims.get(0).rule());
        Map<String, Object> answer = call(request("commit-cost").with("reservation", number).with("actual", cost),
                "commit of reservation " + number + " at cost " + cost);
        return new Refundable.Charged(names(answer, "charged"), names(answer, "dropped"), names(answer, "given"),
                names(answer, "refundDropped"));
    }

    private static List<String> names(Map<String, Object> answer, String field) {
        return ((List<?>) answer.get(field)).stream().map(String.class::cast).toList();
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

    /** The client's next commands throw Errors, in the child, as {@link ErrorClient#armErrors}. */
    @Override
    public void armErrors(int count) {
        call(request("arm").with("resets", 0).with("errors", count), count + " Errors armed in its client");
    }

    /** The client's next commands fail as reset connections, in the child, as {@link ErrorClient#armResets}. */
    @Override
    public void armResets(int count) {
        call(request("arm").with("resets", count).with("errors", 0), count + " resets armed in its client");
    }

    private Json request(String kind) {
        return Json.object().with("do", kind).with("now", clientClock == null ? null : clientClock.getAsLong());
    }

    /** Sends a request and returns its answer, or throws what the child's call threw. */
    private Map<String, Object> call(Json request, String what) {
        Map<String, Object> answer = exchange(request, "its answer to " + what, answerMillis);
        if (answer.get("threw") instanceof Map<?, ?> thrown) {
            @SuppressWarnings("unchecked")
            Map<String, Object> fields = (Map<String, Object>) thrown;
            throw ChildLines.thrown(fields);
        }
        return answer;
    }

    /**
     * One line out, numbered; its answer back within {@code millis}, whatever other calls are out
     * meanwhile; anything else breaks this instance.
     */
    private Map<String, Object> exchange(Json request, String what, long millis) {
        long id = nextId.getAndIncrement();
        String waitingFor = what + " (request " + id + ")";
        CompletableFuture<Map<String, Object>> answer = new CompletableFuture<>();
        waiting.put(id, answer);
        if (broken != null) { // also when it broke just before the call was put: nothing would answer it
            waiting.remove(id);
            throw new IllegalStateException("the child JVM broke earlier, so not sent: " + waitingFor, broken);
        }
        try {
            send(request.with("id", id));
        } catch (IOException e) {
            waiting.remove(id);
            throw broke("could not send it the request for " + waitingFor, e);
        }
        Map<String, Object> answered = await(answer, waitingFor, millis, millis);
        if (answered.get("broken") != null) {
            throw broke("it could not read the request for " + waitingFor + ": " + answered.get("broken"), null);
        }
        return answered;
    }

    private void send(Json line) throws IOException {
        synchronized (requests) {
            requests.write(line + "\n");
            requests.flush();
        }
    }

    /** Waits for an answer at most {@code millis} (said as {@code said} ms); a failure names what was waited for. */
    private Map<String, Object> await(CompletableFuture<Map<String, Object>> answer, String waitingFor, long millis,
                                      long said) {
        try {
            return answer.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw broke("no answer within " + said + " ms: waiting for " + waitingFor, null);
        } catch (ExecutionException e) {
            // It broke meanwhile (see broke): said with what this call waited for.
            throw new IllegalStateException(e.getCause().getMessage() + "\n  while waiting for " + waitingFor,
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw broke("interrupted while waiting for " + waitingFor, e);
        } finally {
            waiting.values().remove(answer);
        }
    }

    private String exitCode() {
        try {
            return process.waitFor(1, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "none yet";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * This instance is broken from now on: the child is killed, every call out fails with what
     * broke it, and the failure names what was waited for.
     */
    private IllegalStateException broke(String what, Throwable cause) {
        String tail;
        synchronized (stderr) {
            tail = String.join("\n    ", stderr);
        }
        IllegalStateException failure = new IllegalStateException("the child JVM of instance " + instance + " (pid "
                + process.pid() + ") of the two-JVM target failed: " + what
                + (tail.isEmpty() ? "" : "\n  its last lines on stderr:\n    " + tail), cause);
        synchronized (this) {
            if (broken == null) {
                broken = failure;
            }
        }
        process.destroyForcibly();
        waiting.values().forEach(call -> call.completeExceptionally(failure));
        ready.completeExceptionally(failure);
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

    /**
     * Asks the child to close its limiter and exit; kills it if it does not within
     * {@link #EXIT_MILLIS}. Again after a close: nothing more.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true; // from now on its output may end
        try {
            if (broken == null && process.isAlive() && ready.isDone() && !ready.isCompletedExceptionally()) {
                try {
                    exchange(Json.object().with("do", "close"), "its close", EXIT_MILLIS);
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
