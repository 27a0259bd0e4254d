package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.it.ValkeySentinels;
import dev.ratelimit.it.ValkeyServer;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The faults that take more than one call to play: one cluster node stalled while a request
 * spans it and another node, a burst of client failures that opens a breaker, a crowd of
 * threads calling into a stalled server, and a Sentinel failover with calls going out while it
 * happens. Each records what it did as {@link Event.Fault}s; the calls they make are recorded as
 * any other.
 */
final class FaultSteps {

    /** Back-to-back requests sent into a node stall at most, until one fails. */
    private static final int MAX_INTO_STALL = 200;
    /** Real ms between the starts of a crowd's threads: their calls time out a little apart. */
    private static final long CROWD_STAGGER_MILLIS = 7;
    /** Real ms a crowd's thread waits between its calls. */
    private static final long CROWD_PAUSE_MILLIS = 2;
    /**
     * How long a failover may wait for the topology to be steady before it (an earlier one's
     * replica resynchronising), and for the sentinels to promote the replica and agree on it
     * (about a second: the promoted replica must report itself a primary, then the others hear it).
     */
    private static final Duration FAILOVER_WAIT = Duration.ofSeconds(30);
    /**
     * How long each instance is given to reach the new primary once every sentinel names it.
     * Its client hears of it from their announcement within milliseconds: this is a busy
     * machine's margin, not a wait the product is allowed.
     */
    static final long REACH_MILLIS = 5_000;
    /** Real ms between two calls while the sentinels fail over, and between two probes of an instance. */
    private static final long FAILOVER_PAUSE_MILLIS = 10;

    private final Runner runner;
    private final Workload workload;
    private final Target target;
    private final History history;

    FaultSteps(Runner runner, Workload workload, Target target, History history) {
        this.runner = runner;
        this.workload = workload;
        this.target = target;
        this.history = history;
    }

    /**
     * One cluster node stalls while requests that span it and the node of a concurrency rule's
     * lease go out back to back (reserved, cancelled when allowed): the stall may begin after
     * the lease's slot group took its lease and before the stalled group's acquiring call, and
     * the lease must then not stay held by nobody. Then the stall's own calls, and probes of
     * every lease of that rule and key, paced so the limiter has its chances to release lost ones.
     */
    void nodeStall(Op.Stall stall) {
        List<Rule> rules = runner.rules();
        Claim lease = null;
        if (!stall.after().isEmpty()) {
            Op.ClaimSpec spec = ((Op.Probe) stall.after().get(0)).claim();
            lease = Claim.of(rules.get(spec.rule()), spec.key(), 1);
        }
        ValkeyServer leaseNode = lease == null ? null : target.serverOf(target.stateKey(lease.rule(), lease.key()));
        Claim partner = null;
        ValkeyServer stalled = null;
        for (Rule rule : rules) {
            for (String key : workload.keys()) {
                ValkeyServer node = target.serverOf(target.stateKey(rule, key));
                if (partner == null && node != leaseNode && !rule.algorithm().isConcurrency()) {
                    partner = Claim.of(rule, key, 1);
                    stalled = node;
                }
            }
        }
        if (stalled == null) {
            stalled = target.servers().stream().filter(n -> n != leaseNode).findFirst().orElseThrow();
        }
        ValkeyServer node = stalled;
        long op = runner.begin();
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "stall-begin", null, null,
                stall.millis() + " ms, node " + node.url()));
        CompletableFuture<Void> sleeping = CompletableFuture.runAsync(() -> node.stall(Duration.ofMillis(stall.millis())));
        runner.stalling(true);
        if (lease != null && partner != null) {
            for (int i = 0; i < MAX_INTO_STALL && !sleeping.isDone(); i++) {
                if (!runner.probe(List.of(lease, partner))) {
                    break;
                }
            }
        } else {
            Runner.pause(Runner.STALL_LEAD_MILLIS);
        }
        for (Op during : stall.during()) {
            runner.run(during);
        }
        sleeping.join();
        runner.stalling(false);
        try (Jedis jedis = node.connect()) {
            jedis.ping();
        }
        op = runner.begin();
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "stall-end", null, null, node.url()));
        for (Op after : stall.after()) {
            Runner.pause(Runner.AFTER_STALL_PAUSE_MILLIS);
            runner.run(after);
        }
    }

    /**
     * A Sentinel failover, asked for at once ({@code SENTINEL FAILOVER}, no wait for the primary
     * to be declared down): the failover's steps go out one after another, again and again,
     * while the sentinels promote the replica and until every one of them names it, so that
     * calls meet the old primary after its replica left it (their writes are lost), the switch,
     * and the new primary. Then the old primary is made a replica of the new one (the sentinels
     * would do it some seconds later; meanwhile a client that has not followed would still write
     * to it, and lose what it wrote), so that it refuses every function call from then on, and
     * each instance's store peeks at the probe until it is answered: that instance has found the
     * new primary by itself. One that has not within {@link #REACH_MILLIS} is named in the
     * failover's end, which the availability invariant flags. The window from the failover's
     * begin to its end is where the invariants allow a lost state and failed calls.
     */
    void failover(Op.Failover failover, Claim probe) {
        ValkeySentinels topology = target.sentinels();
        // Before the window: an earlier failover's replica may still be resynchronising.
        ValkeyServer old = topology.awaitSteady(FAILOVER_WAIT);
        long op = runner.begin();
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "failover-begin", null, null,
                "primary " + old.url()));
        ValkeyServer promoted;
        List<Integer> unreached = new ArrayList<>();
        // No TTL reads meanwhile: which server holds the key the limiter wrote is not known.
        runner.stalling(true);
        try {
            topology.failover(FAILOVER_WAIT);
            long deadline = System.nanoTime() + FAILOVER_WAIT.toNanos();
            for (int i = 0; ; i++) {
                promoted = topology.agreedPrimary().filter(server -> server != old).orElse(null);
                if (promoted != null) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the sentinels did not agree on a new primary within " + FAILOVER_WAIT);
                }
                if (!failover.during().isEmpty()) {
                    runner.run(failover.during().get(i % failover.during().size()));
                }
                Runner.pause(FAILOVER_PAUSE_MILLIS);
            }
            target.failedOverTo(promoted);
            topology.demote(old, promoted);
            for (int instance = 0; instance < target.instances(); instance++) {
                long until = System.nanoTime() + REACH_MILLIS * 1_000_000L;
                while (!runner.storePeek(instance, probe)) {
                    if (System.nanoTime() > until) {
                        unreached.add(instance);
                        break;
                    }
                    Runner.pause(FAILOVER_PAUSE_MILLIS);
                }
            }
        } finally {
            runner.stalling(false);
        }
        StringBuilder detail = new StringBuilder("primary " + promoted.url() + ", formerly " + old.url());
        for (int instance : unreached) {
            detail.append("; instance ").append(instance).append(" did not reach it within ").append(REACH_MILLIS)
                    .append(" ms");
        }
        op = runner.begin();
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "failover-end", null, null, detail.toString()));
    }

    /**
     * The first instance's client fails commands as reset connections, then throws Errors;
     * the burst's calls go to that instance, and then its breaker's open period is waited out,
     * so that the next call of that instance is the probe (and meets an Error if any is left);
     * then the probe meets an unreadable state.
     */
    void burst(Op.Burst burst) {
        long op = runner.begin();
        ClientFaults client = target.errors(0);
        client.armResets(burst.resets());
        client.armErrors(burst.errors());
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "client-errors", null, null,
                burst.resets() + " resets then " + burst.errors() + " errors on instance 0"));
        target.pin(0);
        try {
            for (Op during : burst.during()) {
                runner.run(during);
            }
        } finally {
            target.pin(-1);
        }
        Runner.pause(workload.breakerOpenMillis() + 20);
        String key = Workload.KEYS.get(0);
        target.pin(0);
        try {
            // Errors left meet the probes, each of which reopens the breaker: waited out in turn
            // (a child JVM's client is not asked what is left: one probe per Error armed).
            for (int i = 0; i < burst.errors() && (!(client instanceof ErrorClient local) || local.armed()); i++) {
                runner.run(burst.during().get(i));
                Runner.pause(workload.breakerOpenMillis() + 20);
            }
            // Then the probe meets an unreadable state: Valkey answered, which must close the
            // breaker like any answer (one that did not would leave it open for good). A state of
            // its own, planted for it and deleted after.
            runner.run(new Op.Plant(0, key));
            runner.run(new Op.Peek(new Op.ClaimSpec(0, key, 1)));
            runner.run(new Op.Unplant(0, key));
        } finally {
            target.pin(-1);
        }
    }

    /**
     * The server stalls while threads, started a few ms apart, peek on the first instance until
     * it answers again: the breaker opens with calls still out, which fail while its probes are
     * out. Peeks change no state, so their order among themselves does not matter to the
     * bounds; each is recorded as a whole when it returns.
     */
    void crowd(Op.Crowd crowd, List<Claim> peeks) {
        long op = runner.begin();
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "stall-begin", null, null,
                crowd.millis() + " ms, " + crowd.threads() + " threads peeking"));
        target.pin(0);
        CompletableFuture<Void> sleeping = CompletableFuture.runAsync(
                () -> target.valkey().stall(Duration.ofMillis(crowd.millis())));
        Runner.pause(Runner.STALL_LEAD_MILLIS);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < crowd.threads(); t++) {
            int first = t;
            Thread thread = new Thread(() -> {
                for (int i = first; !sleeping.isDone(); i++) {
                    history.hold();
                    try {
                        runner.peek(runner.begin(), peeks.get(i % peeks.size()));
                    } finally {
                        history.release();
                    }
                    Runner.pause(CROWD_PAUSE_MILLIS);
                }
            }, "checker-crowd-" + t);
            thread.start();
            threads.add(thread);
            Runner.pause(CROWD_STAGGER_MILLIS);
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        sleeping.join();
        target.pin(-1);
        try (Jedis jedis = target.valkey().connect()) {
            jedis.ping();
        }
        op = runner.begin();
        history.add(new Event.Fault(op, runner.clockNow(), history.real(), "stall-end", null, null, null));
    }
}
