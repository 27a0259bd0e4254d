package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.valkey.KeyState;
import dev.ratelimit.it.ValkeyServer;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a workload's steps against a target, one at a time on this thread, and records every
 * call, answer, settlement, clock move, edit and fault in the history. A stall runs its
 * {@code DEBUG SLEEP} on another thread; the calls sent meanwhile are this thread's, so the
 * history's order is the order things happened. Only a crowd sends calls from several threads
 * at once: peeks, which change no state, each recorded as a whole when it returns.
 */
final class Runner {

    /**
     * Real time between the steps after a stall: more than the limiter's pause between two
     * releases of lost leases (100 ms), so each step is a chance to release them.
     */
    static final long AFTER_STALL_PAUSE_MILLIS = 120;

    /** Real time a stall is given to start before calls are sent into it. */
    static final long STALL_LEAD_MILLIS = 30;

    /**
     * The longest a clock move waits on the server clock, where time moves only by waiting: the
     * windows there are at most 200 ms and roll over many times in a run anyway (a call takes
     * a ms or more), so a longer move would only make the run slower. A retry may then wait
     * less than the retry-after it was told: judged all the same.
     */
    static final long MOST_WAIT_MILLIS = 10;

    private final Workload workload;
    /**
     * With the deny cache on, the first rule it can remember, whose requests are acquired, never
     * reserved: a rule a request reserves is never remembered again (its units may be given back
     * at any moment), so without one the cache would be tried only at a run's start. As in an
     * application, where a rule without refund conditions is acquired.
     */
    private final String acquiredOnly;
    private final Target target;
    private final History history;
    private final List<Rule> rules;
    private final FaultSteps faults;
    private final List<Pending> pending = new ArrayList<>();
    private final Set<String> planted = new HashSet<>();
    private final AtomicLong nextOp = new AtomicLong(1);
    private Rejection lastRejected;
    /** Whether a stall's calls are being sent: nothing else may wait on the stalled server then. */
    private boolean stalling;
    /** Connections of the checker's own, per server, for reading TTLs on the server clock (reopened after a restart). */
    private final Map<ValkeyServer, Jedis> ttls = new java.util.HashMap<>();
    /** Whether the last take was decided by the store for every rule (no failure, no fallback). */
    private boolean lastAnswered;

    /** A reservation not settled yet: the op that took it, what it claimed. */
    private record Pending(long op, List<Claim> claims, Reservation reservation) {
    }

    /** The last call rejected with a retry-after: to retry it, or to move the clock to it. */
    private record Rejection(boolean reserve, List<Claim> claims, long at, long retryAfter) {
    }

    /**
     * A runner.
     *
     * @param workload the steps
     * @param target   what they run against
     * @param history  where events go
     */
    Runner(Workload workload, Target target, History history) {
        this.workload = workload;
        this.target = target;
        this.history = history;
        this.rules = new ArrayList<>(workload.rules());
        this.faults = new FaultSteps(this, workload, target, history);
        this.acquiredOnly = workload.resilient() && workload.denyCache() ? workload.rules().stream()
                .filter(r -> !r.algorithm().isConcurrency() && !r.countRejected() && !r.shadow())
                .map(Rule::name).findFirst().orElse(null) : null;
    }

    /**
     * Runs every step.
     *
     * @return the number the first operation of each step has (or would have had, for a step
     *         that did nothing), in step order: which step an operation belongs to
     */
    List<Long> run() {
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("denyCache", workload.denyCache());
        // How long another instance's deny cache may replay a rejection made stale by a give-back here.
        options.put("denyCacheHoldMs", dev.ratelimit.resilient.ResilientRateLimiter.DEFAULT_DENY_CACHE_HOLD.toMillis());
        // Every call to the store is recorded beneath the call that made it (RecordingStore).
        options.put("storeEvents", true);
        options.put("keys", workload.keys());
        options.put("steps", workload.steps().size());
        // To draw the workload again from the seed (a shrunk one is replayed from its steps).
        options.put("drawn", workload.drawn());
        options.put("avoided", workload.avoided().stream().map(Enum::name).sorted().toList());
        options.put("instances", workload.instances());
        options.put("breakerOpenMs", workload.breakerOpenMillis());
        // Units each instance may hold ahead per rule and key, and for how long (LeaseSlack).
        Map<String, Object> leases = new java.util.TreeMap<>();
        workload.localLeases().forEach((rule, lease) -> leases.put(rule, Map.of("size", lease.size(), "ms", lease.millis())));
        options.put("localLeases", leases);
        // The commands each instance's client sends are recorded on a single Valkey (ErrorClient),
        // but not from the child JVMs of the two-JVM target (their breakers go unchecked there).
        options.put("wires", workload.target().single() && !workload.target().twoJvms());
        if (workload.target().twoJvms()) {
            // Every instance a limiter in a child JVM of its own: its calls and answers are recorded.
            options.put("childJvms", workload.instances());
        }
        options.put("pipelined", workload.pipelined());
        // Whose time decides: the client clock the runner moves, or Valkey's TIME (the wall clock).
        options.put("clock", workload.serverClock() ? "server" : "client");
        history.add(new Event.Start(0, now(), history.real(), workload.seed(), workload.target().name(), options));
        for (Rule rule : rules) {
            history.add(new Event.RuleSet(0, now(), history.real(), rule, target.policy(rule.name()),
                    target.localRule(rule.name()), "initial"));
        }
        List<Long> firstOps = new ArrayList<>(workload.steps().size());
        try {
            for (Op step : workload.steps()) {
                firstOps.add(nextOp.get());
                step(step);
                target.checkChild();
            }
        } finally {
            ttls.values().forEach(Jedis::close);
        }
        return firstOps;
    }

    private void step(Op step) {
        // Java 17: no patterns in switch yet.
        if (step instanceof Op.Take take) {
            List<Claim> claims = resolve(take.claims());
            take(take.reserve() && claims.stream().noneMatch(c -> c.rule().name().equals(acquiredOnly)), claims);
        } else if (step instanceof Op.Peek peek) {
            peek(resolve(List.of(peek.claim())).get(0));
        } else if (step instanceof Op.Settle settle) {
            settle(settle);
        } else if (step instanceof Op.Advance advance) {
            advance(advance);
        } else if (step instanceof Op.Retry) {
            if (lastRejected != null) {
                Rejection retried = lastRejected;
                releaseOneHeld(retried.claims());
                take(retried.reserve(), current(retried.claims()));
                if (now() == retried.at() + retried.retryAfter()) {
                    // At the very moment the retry-after named, clients that waited for it come
                    // together: the same call again, in the same millisecond (a window's first).
                    take(retried.reserve(), current(retried.claims()));
                }
            }
        } else if (step instanceof Op.Edit edit) {
            edit(edit);
        } else if (step instanceof Op.Reset reset) {
            reset(resolve(List.of(reset.claim())).get(0));
        } else if (step instanceof Op.OperatorReset reset) {
            operatorReset(resolve(List.of(reset.claim())).get(0));
        } else if (step instanceof Op.Inspect inspect) {
            inspect(resolve(List.of(inspect.claim())).get(0));
        } else if (step instanceof Op.Stall stall) {
            stall(stall);
        } else if (step instanceof Op.Probe probe) {
            probe(resolve(List.of(probe.claim())).get(0));
        } else if (step instanceof Op.Flush) {
            flush();
        } else if (step instanceof Op.Plant plant) {
            plant(plant);
        } else if (step instanceof Op.Unplant unplant) {
            unplant(unplant);
        } else if (step instanceof Op.Restart) {
            restart();
        } else if (step instanceof Op.ClientErrors errors) {
            clientErrors(errors);
        } else if (step instanceof Op.Burst burst) {
            faults.burst(burst);
        } else if (step instanceof Op.Crowd crowd) {
            faults.crowd(crowd, resolve(crowd.peeks()));
        } else if (step instanceof Op.Failover failover) {
            faults.failover(failover, resolve(List.of(failover.probe())).get(0));
        } else {
            throw new IllegalArgumentException("unknown step " + step);
        }
    }

    private long now() {
        return target.now();
    }

    /** The next operation's number, on this thread. */
    long begin() {
        long op = nextOp.getAndIncrement();
        target.op(op);
        return op;
    }

    private void take(boolean reserve, List<Claim> claims) {
        take(reserve, claims, true);
    }

    /**
     * One call; after a rejection, one in five ({@code askMore}) is followed at once by the same
     * call with each cost one more (up to its capacity), as a caller turned away that asks for
     * more: a rejection of the smaller cost says nothing of the bigger's wait, and a deny cache
     * must not answer it (no draw of its own: the seeds' steps stay as they were).
     */
    private void take(boolean reserve, List<Claim> claims, boolean askMore) {
        long op = begin();
        history.add(new Event.Call(op, now(), history.real(), reserve ? Event.Kind.RESERVE : Event.Kind.ACQUIRE, claims,
                target.instance()));
        lastAnswered = false;
        try {
            Decisions decisions;
            if (reserve) {
                Reservation reservation = target.limiter().reserveAll(claims);
                decisions = reservation.decisions();
                if (reservation.allowed()) {
                    pending.add(new Pending(op, claims, reservation));
                }
            } else {
                decisions = target.limiter().acquireAll(claims);
            }
            history.add(new Event.Decided(op, now(), history.real(), decisions));
            lastAnswered = decisions.all().stream().allMatch(d -> d.basis() == Decision.Basis.SHARED);
            if (!decisions.allowed() && !decisions.unavailable()) {
                lastRejected = new Rejection(reserve, claims, now(), decisions.retryAfter().toMillis());
            }
        } catch (RuntimeException | Error e) {
            failed(op, e);
        }
        ttls(op, claims);
        if (askMore && op % 5 == 0 && lastRejected != null && lastRejected.claims() == claims) {
            take(reserve, claims.stream()
                    .map(c -> Claim.of(c.rule(), c.key(), Math.min(c.cost() + 1, c.rule().capacity()))).toList(), false);
        }
    }

    /**
     * On the server clock, each claimed key's TTL as Valkey has it now, recorded for the
     * invariants to hold against the state's end (README: no longer than the state is needed,
     * with no slack on the server clock). Not while a stall holds the server (the read would
     * wait it out, and the stall's calls must go in while it lasts), nor for a planted key.
     */
    private void ttls(long op, List<Claim> claims) {
        if (!target.serverClock() || stalling) {
            return;
        }
        Set<String> read = new HashSet<>();
        for (Claim claim : claims) {
            String stateKey = target.stateKey(claim.rule(), claim.key());
            if (planted.contains(stateKey) || !read.add(stateKey)) {
                continue;
            }
            ValkeyServer server = target.serverOf(stateKey);
            long before = now();
            long pttl;
            try {
                pttl = ttls.computeIfAbsent(server, ValkeyServer::connect).pttl(stateKey);
            } catch (RuntimeException e) {
                // The server was unreachable (a restart): the next read opens another connection.
                Jedis broken = ttls.remove(server);
                if (broken != null) {
                    broken.close();
                }
                continue;
            }
            history.add(new Event.Ttl(op, before, history.real(), claim.rule(), claim.key(), stateKey, pttl, now()));
        }
    }

    private void probe(Claim claim) {
        probe(List.of(claim));
    }

    /**
     * Reserves the claims and, if allowed, cancels at once: does each rule have room?
     *
     * @return whether the store decided every rule
     */
    boolean probe(List<Claim> claims) {
        take(true, claims);
        boolean answered = lastAnswered;
        Pending taken = pending.isEmpty() ? null : pending.get(pending.size() - 1);
        if (taken != null && taken.op() == nextOp.get() - 1) {
            pending.remove(pending.size() - 1);
            long op = begin();
            long began = now();
            List<String> given = null;
            String error = null;
            try {
                given = taken.reservation().cancel();
            } catch (RuntimeException | Error e) {
                error = RecordingStore.describe(e);
            }
            history.add(new Event.Settled(op, now(), history.real(), taken.op(), "cancel",
                    taken.claims().stream().map(c -> c.rule().name()).toList(), given, error, began));
        }
        return answered;
    }

    private void failed(long op, Throwable e) {
        history.add(new Event.Failed(op, now(), history.real(), RecordingStore.describe(e),
                e instanceof UnreadableStateException unreadable ? unreadable.ruleName() : null));
    }

    private void peek(Claim claim) {
        peek(begin(), claim);
    }

    /**
     * A peek as operation {@code op}, on this thread.
     *
     * @param op    the operation's number, set on this thread
     * @param claim what to peek at
     */
    void peek(long op, Claim claim) {
        history.add(new Event.Call(op, now(), history.real(), Event.Kind.PEEK, List.of(claim), target.instance()));
        try {
            Decision decision = target.limiter().peek(claim.rule(), claim.key(), claim.cost());
            history.add(new Event.Decided(op, now(), history.real(), Decisions.of(List.of(claim), List.of(decision))));
        } catch (RuntimeException | Error e) {
            failed(op, e);
        }
    }

    /**
     * A peek at an instance's store itself, beneath its resilient layer (no deny cache or policy
     * answers it), recorded as that instance's call: whether the store answered it.
     *
     * @param instance the instance
     * @param claim    what to peek at
     * @return whether Valkey answered
     */
    boolean storePeek(int instance, Claim claim) {
        long op = begin();
        history.add(new Event.Call(op, now(), history.real(), Event.Kind.PEEK, List.of(claim), instance));
        try {
            Decision decision = target.store(instance).peek(claim.rule(), claim.key(), claim.cost());
            history.add(new Event.Decided(op, now(), history.real(), Decisions.of(List.of(claim), List.of(decision))));
        } catch (RuntimeException | Error e) {
            failed(op, e);
        }
        return target.lastAnswered(instance) == op;
    }

    private void settle(Op.Settle settle) {
        if (pending.isEmpty()) {
            return;
        }
        Pending chosen = pending.remove(settle.pick() < 0 ? pending.size() - 1 : settle.pick() % pending.size());
        String named = rules.get(settle.rule()).name();
        String how = settle.how();
        List<String> asked = new ArrayList<>();
        for (Claim claim : chosen.claims()) {
            boolean lease = claim.rule().algorithm() == Algorithm.CONCURRENCY;
            boolean ask = switch (how) {
                case "commit" -> lease;
                case "commit-cost" -> true;
                case "cancel-one" -> lease || claim.rule().name().equals(named);
                default -> true;
            };
            if (ask) {
                asked.add(claim.rule().name());
            }
        }
        long op = begin();
        long began = now();
        List<String> given = null;
        String error = null;
        try {
            switch (how) {
                case "commit" -> chosen.reservation().commit();
                case "commit-cost" -> chosen.reservation().commit(settle.actual());
                case "cancel-one" -> given = chosen.reservation().cancel(rule -> rule.name().equals(named));
                default -> given = chosen.reservation().cancel();
            }
        } catch (RuntimeException | Error e) {
            error = RecordingStore.describe(e);
        }
        history.add(new Event.Settled(op, now(), history.real(), chosen.op(), how, asked, given, error, began,
                settle.actual()));
    }

    /**
     * Before a retry of a call a concurrency rule may have refused: a reservation that holds one
     * of that rule's leases of the key lets it go (the oldest), so that the retry finds a slot
     * free at once, where a rejection remembered past it (a deny cache) would show. No draw of
     * its own: the seeds' other steps stay as they were.
     */
    private void releaseOneHeld(List<Claim> rejected) {
        for (Claim claim : rejected) {
            if (claim.rule().algorithm() != Algorithm.CONCURRENCY) {
                continue;
            }
            for (int p = 0; p < pending.size(); p++) {
                for (Claim held : pending.get(p).claims()) {
                    if (held.rule().name().equals(claim.rule().name()) && held.key().equals(claim.key())) {
                        int rule = rules.indexOf(rules.stream().filter(r -> r.name().equals(claim.rule().name()))
                                .findFirst().orElseThrow());
                        settle(new Op.Settle(p, "commit", rule));
                        return;
                    }
                }
            }
        }
    }

    private void advance(Op.Advance advance) {
        long window = rules.get(advance.rule()).window().toMillis();
        long retryAt = lastRejected == null ? now() : lastRejected.at() + lastRejected.retryAfter();
        long by = switch (advance.how()) {
            case "zero" -> 0;
            case "one" -> 1;
            case "fraction" -> Math.max(1, Math.round(advance.amount() * window));
            case "windows" -> Math.round(advance.amount() * window);
            case "retry" -> Math.max(0, retryAt - now());
            default -> Math.max(0, retryAt - 1 - now());
        };
        long op = begin();
        if (target.serverClock()) {
            // Time passes only by waiting here; the event's time is when the wait ended.
            pause(Math.min(by, MOST_WAIT_MILLIS));
        } else {
            target.advance(by);
        }
        history.add(new Event.Clock(op, now(), history.real(), by, advance.how()));
    }

    private void edit(Op.Edit edit) {
        Rule old = rules.get(edit.rule());
        Rule rule = Rule.of(old.name(), old.algorithm(), edit.limit(), Duration.ofMillis(edit.windowMs()))
                .withCountRejected(old.countRejected()).withShadow(old.shadow());
        if (old.algorithm().hasBurst()) {
            rule = rule.toBuilder().burst(edit.burst()).build();
        }
        if (edit.calendar() != null) {
            rule = rule.toBuilder().calendar(Calendars.parse(edit.calendar())).build();
        }
        // A rule that holds requests for slots keeps doing so, within what the edit allows.
        rule = rule.withMaxDelay(Workload.keptMaxDelay(old.maxDelay(), rule));
        rules.set(edit.rule(), rule);
        long op = begin();
        history.add(new Event.RuleSet(op, now(), history.real(), rule, target.policy(rule.name()),
                target.localRule(rule.name()), "edit"));
        target.rulesEdited();
    }

    private void reset(Claim claim) {
        long op = begin();
        history.add(new Event.Call(op, now(), history.real(), Event.Kind.RESET, List.of(claim), target.instance()));
        try {
            target.limiter().reset(claim.rule(), claim.key());
        } catch (RuntimeException | Error e) {
            failed(op, e);
        }
    }

    /**
     * An operator's reset ({@code ratelimit reset}): from a limiter of its own, recorded as a
     * store call of instance {@value Target#OPERATOR}, whose fallback and deny cache are nobody's.
     */
    private void operatorReset(Claim claim) {
        long op = begin();
        history.add(new Event.Call(op, now(), history.real(), Event.Kind.RESET, List.of(claim), Target.OPERATOR));
        long began = history.real();
        try {
            target.operator().reset(claim.rule(), claim.key(), claim.cost());
            history.add(new Event.StoreCall(op, now(), history.real(), "reset", List.of(claim), null, null, null, began,
                    Target.OPERATOR));
        } catch (RuntimeException | Error e) {
            history.add(new Event.StoreCall(op, now(), history.real(), "reset", List.of(claim), null,
                    RecordingStore.describe(e), null, began, Target.OPERATOR));
            failed(op, e);
        }
    }

    /** An operator's inspect ({@code ratelimit inspect}): its decision judged as a peek's. */
    private void inspect(Claim claim) {
        long op = begin();
        history.add(new Event.Call(op, now(), history.real(), Event.Kind.PEEK, List.of(claim), Target.OPERATOR));
        try {
            KeyState state = target.operator().inspect(claim.rule(), claim.key(), claim.cost());
            if (state.decision().isPresent()) {
                history.add(new Event.Decided(op, now(), history.real(),
                        Decisions.of(List.of(claim), List.of(state.decision().get()))));
            } else {
                // What a peek throws for such a state: the inspector says it instead.
                failed(op, new UnreadableStateException(claim.rule().name(), state.unreadable().orElse("")));
            }
        } catch (RuntimeException | Error e) {
            failed(op, e);
        }
    }

    private void stall(Op.Stall stall) {
        if (target.cluster() != null) {
            faults.nodeStall(stall);
            return;
        }
        long op = begin();
        history.add(new Event.Fault(op, now(), history.real(), "stall-begin", null, null, stall.millis() + " ms"));
        ValkeyServer stalled = target.primary();
        CompletableFuture<Void> sleeping = CompletableFuture.runAsync(
                () -> stalled.stall(Duration.ofMillis(stall.millis())));
        pause(STALL_LEAD_MILLIS);
        stalling = true;
        try {
            for (Op during : stall.during()) {
                step(during);
            }
        } finally {
            stalling = false;
        }
        sleeping.join();
        // The calls queued in the stall run as it ends; a command on another connection after
        // them makes it likely they have run before the next step is sent.
        try (Jedis jedis = stalled.connect()) {
            jedis.ping();
        }
        op = begin();
        history.add(new Event.Fault(op, now(), history.real(), "stall-end", null, null, null));
        for (Op after : stall.after()) {
            pause(AFTER_STALL_PAUSE_MILLIS);
            step(after);
        }
    }

    private void flush() {
        long op = begin();
        for (ValkeyServer server : target.servers()) {
            try (Jedis jedis = server.connect()) {
                jedis.functionFlush();
            }
        }
        history.add(new Event.Fault(op, now(), history.real(), "function-flush", null, null, null));
    }

    private void plant(Op.Plant plant) {
        Rule rule = rules.get(plant.rule());
        String stateKey = target.stateKey(rule, plant.key());
        if (!planted.add(stateKey)) {
            return;
        }
        long op = begin();
        try (Jedis jedis = target.serverOf(stateKey).connect()) {
            jedis.del(stateKey);
            jedis.lpush(stateKey, "planted by the checker");
        }
        history.add(new Event.Fault(op, now(), history.real(), "plant", rule.name(), plant.key(), stateKey));
    }

    private void unplant(Op.Unplant unplant) {
        Rule rule = rules.get(unplant.rule());
        String stateKey = target.stateKey(rule, unplant.key());
        if (!planted.remove(stateKey)) {
            return;
        }
        long op = begin();
        try (Jedis jedis = target.serverOf(stateKey).connect()) {
            jedis.del(stateKey);
        }
        history.add(new Event.Fault(op, now(), history.real(), "unplant", rule.name(), unplant.key(), stateKey));
    }

    /**
     * The server stopped and started on the same port: every state is gone, and reservations
     * from before may still be settled (their refunds must find nothing to give back).
     */
    private void restart() {
        long op = begin();
        if (!target.valkey().restartable()) {
            history.add(new Event.Fault(op, now(), history.real(), "restart-impossible", null, null,
                    "the server at VALKEY_URL is not this run's to restart"));
            return;
        }
        target.valkey().restart();
        planted.clear();
        history.add(new Event.Fault(op, now(), history.real(), "restart", null, null, null));
    }

    /** The client of the instance the next call goes to throws an Error for its next commands. */
    private void clientErrors(Op.ClientErrors errors) {
        long op = begin();
        int instance = (int) (nextOp.get() % workload.instances());
        target.errors(instance).armErrors(errors.count());
        history.add(new Event.Fault(op, now(), history.real(), "client-errors", null, null,
                errors.count() + " errors on instance " + instance));
    }

    /**
     * The rules as they are now.
     *
     * @return a copy
     */
    List<Rule> rules() {
        return List.copyOf(rules);
    }

    /** Claims of the rules as they are now, costs cut to what each rule can ever allow. */
    List<Claim> resolve(List<Op.ClaimSpec> specs) {
        List<Claim> claims = new ArrayList<>(specs.size());
        for (Op.ClaimSpec spec : specs) {
            Rule rule = rules.get(spec.rule());
            long cost = spec.cost() == 0 ? rule.capacity() : Math.min(spec.cost(), rule.capacity());
            claims.add(Claim.of(rule, spec.key(), cost));
        }
        return claims;
    }

    /** The same claims on the rules as edited since. */
    private List<Claim> current(List<Claim> claims) {
        List<Claim> now = new ArrayList<>(claims.size());
        for (Claim claim : claims) {
            Rule rule = rules.stream().filter(r -> r.name().equals(claim.rule().name())).findFirst().orElseThrow();
            long cost = Math.min(claim.cost(), rule.capacity());
            now.add(Claim.of(rule, claim.key(), cost));
        }
        return now;
    }

    /** Runs a step of a fault's, on this thread. */
    void run(Op step) {
        step(step);
    }

    /**
     * Says whether a stall holds a server: while it does, no TTL is read (see {@link #ttls}).
     *
     * @param stalling true from the stall's start until it ended
     */
    void stalling(boolean stalling) {
        this.stalling = stalling;
    }

    /** The client clock now. */
    long clockNow() {
        return now();
    }

    /** Pauses this thread. */
    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
