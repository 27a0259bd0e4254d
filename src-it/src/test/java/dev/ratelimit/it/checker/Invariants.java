package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The promises of a rate limiter as invariants over a {@link History}, from each algorithm's
 * definition, never from how the code works. Time is the client clock's: every decision in
 * the history carries the exact time the limiter decided on, so the bounds are exact integers,
 * with no tolerance for a busy machine. Only the release of lost leases is measured in real
 * time, and only as "soon after Valkey answers" (see below).
 *
 * <h2>What is counted</h2>
 * Per domain (the shared store; the in-process fallback of a rule with a local policy, which
 * counts under its own local rule), rule and key, a {@link Ledger} of units:
 * <ul>
 *   <li><b>taken</b>: the caller was told the request was allowed and this rule allowed it
 *       (an allowed shadow rule in an allowed request counts too, as it does alone);</li>
 *   <li><b>attempt</b>: a count-rejected rule in a request that was not allowed, or that it did
 *       not allow, recorded the attempt;</li>
 *   <li><b>possible</b>: a call to the store that threw after it may have run (the socket timed
 *       out while Valkey ran it: a lost reply), and a refund owed within a call (rules decided
 *       apart give back when the other side rejects) that was dropped.</li>
 * </ul>
 * A refund the store reported ({@code cancel} returned the rule) gives the units back; one that
 * threw may or may not have. A reset, a planted unreadable value and its deletion wipe the
 * state; an edit changes the rule the state is read under. A restart may have wiped any state,
 * and so may a Sentinel failover, before each call while it lasts and at its end, where it may
 * also have undone refunds, releases and resets (liveness then waits: see {@link #fault}).
 *
 * <h2>Two readings, so that every check is sound</h2>
 * The store's true count is unknown where replies were lost, but it lies between two bounds
 * the history gives exactly (see {@link Ledger}):
 * <ul>
 *   <li>The <b>lower bound</b> counts only taken units that no refund may have given back, since
 *       the last edit or wipe. A lost reply is <em>not counted</em> here, a refund that threw is
 *       taken as <em>given back</em>, a bucket's refund (which may be partial) as the whole
 *       reservation never having been taken: each only lowers the bound. For a bucket this last
 *       point is the definition itself: a refund gives back at most what the bucket would hold had
 *       the units never been taken, so the store's debt never falls below that of a bucket that
 *       saw only the remaining units, which must then obey the bucket's law. Units taken before
 *       an edit are left out (they still weigh on the new rule, never less, so leaving them out
 *       only lowers the bound), except leases, which keep their own timeouts.</li>
 *   <li>The <b>upper bound</b> counts everything the store may count: attempts, possible units,
 *       refunds only where the store said it gave back and giving back is exact (windows, logs,
 *       leases; a bucket's refund is ignored), and liveness is not asked until the state written
 *       under an old rule can no longer weigh ({@link Ledger#horizon}).</li>
 * </ul>
 * A <b>safety</b> check fails only when even the lower bound breaks the limit; a <b>liveness</b>
 * check fails only when even the upper bound leaves room. Neither can flag what the definitions
 * allow.
 *
 * <h2>The invariants</h2>
 * Checked at every decision the store or the fallback made (basis SHARED, including the deny
 * cache's replays, or LOCAL; a policy's SKIPPED and UNAVAILABLE decide nothing):
 * <ul>
 *   <li>an allowed rule (and an allowed peek) must be admitted by the lower bound:
 *       fixed window, units in the aligned window ≤ limit; sliding log, units in any interval of
 *       one window ≤ limit; token bucket and GCRA, units in any [a, b] ≤ burst + limit × (b − a)
 *       / window (checked as the bucket run over the units, whose debt is exactly the worst such
 *       interval); sliding window counter, its own test, the documented approximation
 *       {@code cur + prev × (window − elapsed) / window ≤ limit} with {@code cur} and {@code prev}
 *       the units of the current and the previous aligned window (so any aligned window ≤ limit,
 *       and any interval of one window < 2 × limit); concurrency, leases held at that instant plus
 *       the new ones ≤ limit;</li>
 *   <li>a rejected rule (and a rejected peek) must be refused by the upper bound, for every
 *       algorithm the same tests: a rejection while the history shows room is a lockout;</li>
 *   <li>a rejection's retry-after, the rule's own and the request's, is never early: with no
 *       other traffic, the lower bound must admit the same cost at t + retry-after.</li>
 * </ul>
 *
 * <h2>Lost leases</h2>
 * A lease taken by a call whose reply was lost, or whose release threw, is held by nobody; the
 * limiter promises to release it once Valkey answers again, before a later decision, trying at
 * most every 100 ms. The upper bound counts it until the limiter has had its chances: after the
 * first answer from the store following the loss, three acquiring calls the store answered,
 * the first at least 100 ms after that answer and each at least 110 ms after the one before.
 * Between two such calls at least one release was tried (tries are 100 ms apart, and each
 * call tries when one is due), so two tries reached a store that had run the lost call. After
 * the third, the lease must be free. This is the one place real time enters, and only as a
 * lower bound on waiting: a slow machine makes the grace longer, never a false alarm.
 */
final class Invariants {

    static final String STORE = "store";
    static final String LOCAL = "local";

    /** The first release may be tried once this long after Valkey answers again (LostPermits' pause). */
    private static final long FIRST_CHANCE_MILLIS = 100;
    /** Calls this far apart each have a release tried between them. */
    private static final long CHANCE_SPACING_MILLIS = 110;
    /** Chances after which a lost lease must be free. */
    private static final int CHANCES = 3;
    /**
     * How far the lease clock (monotonic, read in whole ms) and Valkey's {@code TIME} (whole ms
     * on another base) may see one instant apart beyond a call's length: a ms of rounding each.
     */
    private static final long LEASE_CLOCK_MILLIS = 2;

    private final Map<String, Ledger> ledgers = new LinkedHashMap<>();
    private final Map<String, Rule> rules = new HashMap<>();
    private final Map<String, Rule> localRules = new HashMap<>();
    /** The rules single keys are held to ("rule/key"): a plan, a provided limit (over HTTP). */
    private final Map<String, Rule> keyRules = new HashMap<>();
    private final Map<Long, Reserved> reservations = new HashMap<>();
    private final List<Unit> lost = new ArrayList<>();
    private final List<Violation> violations = new ArrayList<>();
    private final Promises promises = new Promises();
    private final LeaseSlack leaseSlack = new LeaseSlack();
    /** Whether the history records the store's calls; if not, every undecided claim may have been counted. */
    private boolean storeEvents;
    /** Limiter instances sharing the store: each has its own fallback, deny cache and lost leases. */
    private int instances = 1;
    /** The open defects the run steered clear of, from its first line. */
    private List<?> avoided = List.of();
    /**
     * Whether the calls were requests over HTTP: what failed is then the request (a client that
     * left, a filter that decided nothing), judged by the HTTP checks, not the limiter's contract.
     */
    private boolean overHttp;
    /**
     * How long a deny cache replays a rejection at most, 0 without one: room another instance
     * makes (a refund, a release) is seen by this one only after that.
     */
    private long denyCacheHoldMs;
    /**
     * Whether the store decided on Valkey's {@code TIME}: each call's time is then known only as
     * the interval from its sending to its outcome (see {@link Ledger}), and a lost reply's units
     * may have been counted until the store next answered.
     */
    private boolean serverClock;
    /**
     * Possible units of lost replies (server clock), by rule and key, whose latest time is not
     * known until the server that holds that key is seen answering again.
     */
    private final Map<String, List<Unit>> unanswered = new HashMap<>();
    /**
     * Per instance, rule and key (server clock): until when the instance's deny cache may replay
     * the last rejection the store made, its hold counted from when the answer came back.
     */
    private final Map<String, Long> replayUntil = new HashMap<>();
    /** Per instance, rule and key: the last rejection the store made (not a replay), which a replay repeats. */
    private final Map<String, StoreRejection> storeRejected = new HashMap<>();
    /** Per rule and key: the last op at which each instance took units on the store. */
    private final Map<String, Map<Integer, Long>> lastTake = new HashMap<>();
    /** Per rule (server clock): from when every state of it was written under its current settings. */
    private final Map<String, Long> ttlFrom = new HashMap<>();
    /**
     * Per rule and key (fixed windows, server clock): the start of the window of the latest
     * allowed call that claimed it, and the longest such a call in that window took, sending to
     * answer.
     */
    private final Map<String, long[]> longestTake = new HashMap<>();
    /** The events of the operation being judged. */
    private List<Event> current = List.of();
    /**
     * Whether a Sentinel failover is under way (between its begin and end): the store may be
     * two servers, the old primary taking writes its replica no longer copies, and each call
     * may meet either.
     */
    private boolean failingOver;

    /** A rejection the store made: its op, and how many times its ledger had had room made by then. */
    private record StoreRejection(long op, int room) {
    }

    /** An allowed reservation: what it claimed and was told. */
    private record Reserved(Event.Call call, Decisions decisions) {
    }

    /**
     * Full buckets of debt a bucket may hold: 2, or in a history with costs known after the
     * work, the charges' bound (a key may owe that much).
     */
    private long debtBuckets = 2;

    private Invariants() {
    }

    /**
     * Every violation of a history, in the order they happened.
     *
     * @param events the history
     * @return the violations; empty when every promise held
     */
    static List<Violation> check(List<Event> events) {
        Invariants invariants = new Invariants();
        // Charges, and an edit of a rule that holds requests for slots, keep up to eight buckets.
        if (events.stream().anyMatch(e -> e instanceof Event.Settled settled && settled.actual() >= 0
                || e instanceof Event.RuleSet set && !set.rule().maxDelay().isZero())) {
            invariants.debtBuckets = dev.ratelimit.internal.Charges.DEBT_BUCKETS;
        }
        List<Event> group = new ArrayList<>();
        for (Event event : events) {
            if (event instanceof Event.Wire && event.op() == 0 && !group.isEmpty() && group.get(0).op() != 0) {
                // A command the limiter sent on its own, from no operation's thread (a local
                // lease's give-back): it belongs to no operation, and must not split the one in
                // progress (the breaker's checks still read it from the whole history).
                continue;
            }
            if (!group.isEmpty() && group.get(0).op() != event.op()) {
                invariants.operation(group);
                group = new ArrayList<>();
            }
            group.add(event);
        }
        if (!group.isEmpty()) {
            invariants.operation(group);
        }
        invariants.violations.addAll(BreakerInvariants.check(events));
        invariants.violations.addAll(Availability.check(events));
        return invariants.violations;
    }

    /** The domain of an instance's in-process fallback. */
    private static String local(int instance) {
        return instance == 0 ? LOCAL : LOCAL + "#" + instance;
    }

    /** The events of one operation: a call and what happened beneath it, a settlement, an edit... */
    private void operation(List<Event> events) {
        long op = events.get(0).op();
        Event.Call call = null;
        Event outcome = null;
        Event.Response response = null;
        for (Event event : events) {
            if (event instanceof Event.Start start) {
                storeEvents = Boolean.TRUE.equals(start.options().get("storeEvents"));
                instances = ((Number) start.options().getOrDefault("instances", 1)).intValue();
                leaseSlack.start(start.options());
                avoided = start.options().get("avoided") instanceof List<?> names ? names : List.of();
                overHttp = "HTTP".equals(start.target());
                denyCacheHoldMs = Boolean.TRUE.equals(start.options().get("denyCache"))
                        ? ((Number) start.options().getOrDefault("denyCacheHoldMs", 0)).longValue() : 0;
                serverClock = "server".equals(start.options().get("clock"));
            } else if (event instanceof Event.RuleSet set) {
                ruleSet(set);
            } else if (event instanceof Event.Fault fault) {
                fault(fault);
            } else if (event instanceof Event.Call c) {
                call = c;
            } else if (event instanceof Event.Response r) {
                response = r;
            } else if (event instanceof Event.Decided || event instanceof Event.Failed || event instanceof Event.Settled) {
                outcome = event;
            } else if (event instanceof Event.StoreCall store && store.answered()) {
                storeAnswered(event.real(), op, store.instance());
                for (Claim claim : store.claims()) {
                    answeredAgain(claim.rule().name() + "/" + claim.key(), event.at());
                }
            } else if (event instanceof Event.StoreRefund refund && refund.error() == null) {
                storeAnswered(event.real(), op, refund.instance());
            } else if (event instanceof Event.Ttl ttl) {
                ttl(ttl);
            }
            if (!overHttp) {
                contract(event);
            }
        }
        current = events;
        if (call != null && failingOver) {
            // During a failover a call may meet the new primary, which lacks what the old one
            // took since the replica left it (and what it had not copied yet), or the old one,
            // which lacks what the new one took: before each call every state may be gone.
            wipeStore(call.at());
        }
        if (call != null && serverClock && outcome != null) {
            // Decided by Valkey's TIME somewhere between the sending and the outcome.
            call = new Event.Call(call.op(), call.at(), call.real(), call.kind(), call.claims(), call.instance(),
                    outcome.at());
        }
        if (call != null) {
            switch (call.kind()) {
                case ACQUIRE, RESERVE -> {
                    if (outcome instanceof Event.Decided decided) {
                        take(call, decided, events);
                    } else {
                        failedTake(call, events);
                    }
                    if (response != null) {
                        for (Violation v : HttpChecks.check(call, outcome, response, avoided)) {
                            violations.add(v);
                        }
                    }
                    if (events.stream().anyMatch(e -> e instanceof Event.StoreCall s && s.answered()
                            && !s.kind().equals("peek") && !s.kind().equals("reset"))) {
                        chance(call.real(), op, call.instance());
                    }
                }
                case PEEK -> {
                    if (outcome instanceof Event.Decided decided) {
                        peek(call, decided);
                    }
                }
                case RESET -> reset(call, events);
            }
        } else if (outcome instanceof Event.Settled settled) {
            settle(settled, events);
        }
    }

    private void ruleSet(Event.RuleSet set) {
        Rule rule = set.rule();
        if (set.key() != null) {
            // One key's own rule: its ledger reads the state under it from now on, as after an edit.
            Rule before = keyRules.put(rule.name() + "/" + set.key(), rule);
            Ledger ledger = ledgers.get(STORE + "/" + rule.name() + "/" + set.key());
            if (ledger != null && before != null && !before.equals(rule)) {
                ledger.edit(rule, set.at());
            } else if (ledger != null && before == null && !ledger.current().equals(rule)) {
                ledger.edit(rule, set.at());
            }
            return;
        }
        Rule before = rules.put(rule.name(), rule);
        if (before != null && !before.equals(rule)) {
            // States written under the old settings end on their own terms.
            ttlFrom.merge(rule.name(), set.at() + lifetime(before, debtBuckets), Math::max);
        }
        if (set.localRule() != null) {
            localRules.put(rule.name(), set.localRule());
        }
        if (set.why().equals("edit")) {
            for (Ledger ledger : ledgers.values()) {
                if (ledger.domain.equals(STORE) && ledger.rule.equals(rule.name())
                        && !keyRules.containsKey(rule.name() + "/" + ledger.key)) {
                    ledger.edit(rule, set.at());
                }
            }
        }
    }

    private void fault(Event.Fault fault) {
        leaseSlack.fault(fault.at());
        if (fault.kind().equals("stall-end")) {
            // The calls queued in the stall have run (the runner pinged after them).
            for (String which : List.copyOf(unanswered.keySet())) {
                answeredAgain(which, fault.at());
            }
        }
        if (fault.kind().equals("plant") || fault.kind().equals("unplant")) {
            ledger(STORE, fault.rule(), fault.key()).wipe(fault.at(), true, true, denyCacheHoldMs);
        } else if (fault.kind().equals("time-uncertain")) {
            // A decision's time straddled an aligned window's start: which window it counted in
            // is unknown, so nothing counted so far is relied on either way (as a wipe that may
            // have happened, whose state liveness no longer trusts).
            for (Ledger ledger : ledgers.values()) {
                ledger.wipe(fault.at(), false, true, 0);
            }
        } else if (fault.kind().equals("restart")) {
            // The state may be gone (and is, without persistence): the lower bound forgets what
            // was taken before; the upper bound keeps it, as a state that may have survived.
            wipeStore(fault.at());
        } else if (fault.kind().equals("failover-begin")) {
            failingOver = true;
            wipeStore(fault.at());
        } else if (fault.kind().equals("failover-end")) {
            failingOver = false;
            // The new primary answered every instance after the old one was made its replica:
            // every call sent to either before has run, or never will.
            for (String which : List.copyOf(unanswered.keySet())) {
                answeredAgain(which, fault.at());
            }
            // Replication is asynchronous: the promoted replica has the old primary's writes up
            // to when it was promoted, less those it had not copied yet, and none of those the
            // old one took after. No tighter statement holds, so, as for a restart, every state
            // may be gone (the lower bound forgets what was taken before, the upper bound keeps
            // it), and more: a lost write may also be a refund, a release or a reset, whose
            // units the new primary still counts. The upper bound does not know those, so
            // liveness waits until nothing written before can weigh any more.
            for (Ledger ledger : ledgers.values()) {
                if (ledger.domain.equals(STORE)) {
                    ledger.wipe(fault.at(), false, true, denyCacheHoldMs);
                    ledger.livenessNotBefore(fault.at() + ledger.longestWeight());
                }
            }
        }
    }

    /** Every state of the store may be gone from {@code at}: the lower bound forgets what came before. */
    private void wipeStore(long at) {
        for (Ledger ledger : ledgers.values()) {
            if (ledger.domain.equals(STORE)) {
                ledger.wipe(at, false, true, denyCacheHoldMs);
            }
        }
    }

    /**
     * The limiter's contract: whatever fails, a call throws {@code RateLimitException} (its
     * subclasses included), never an Error or anything else, so that the filter can give the
     * request its rule's policy.
     */
    private void contract(Event event) {
        String error = event instanceof Event.Failed failed ? failed.error()
                : event instanceof Event.Settled settled ? settled.error() : null;
        if (error != null && !error.startsWith("RateLimitException") && !error.startsWith("UnreadableStateException")
                && !error.startsWith("NotAttempted")) {
            violations.add(new Violation("a call throws only RateLimitException", "it threw " + error, event.op(),
                    STORE, "-", "-", event.at(), event.at()));
        }
    }

    private Ledger ledger(String domain, String rule, String key) {
        return ledgers.computeIfAbsent(domain + "/" + rule + "/" + key,
                k -> new Ledger(domain, rule, key, domain.equals(STORE)
                        ? keyRules.getOrDefault(rule + "/" + key, rules.get(rule)) : localRules.get(rule), debtBuckets));
    }

    /** The cost the fallback is asked for: a local rule may have a smaller capacity. */
    private long localCost(Claim claim) {
        return Math.min(claim.cost(), localRules.get(claim.rule().name()).capacity());
    }

    private void take(Event.Call call, Event.Decided decided, List<Event> events) {
        Decisions decisions = decided.decisions();
        List<Claim> claims = call.claims();
        long t = call.at();
        for (Claim claim : claims) {
            if (serverClock && decisions.allowed() && claim.rule().algorithm() == dev.ratelimit.Algorithm.FIXED_WINDOW) {
                long start = Calendars.window(claim.rule(), t)[0];
                long[] longest = longestTake.computeIfAbsent(claim.rule().name() + "/" + claim.key(),
                        k -> new long[] {start, 0});
                if (longest[0] != start) {
                    longest[0] = start;
                    longest[1] = 0;
                }
                longest[1] = Math.max(longest[1], call.latest() - t);
            }
        }
        // Every rule is judged on the state before this call, and by whether it could delay: only
        // where it decides the request alone, beside shadow rules and concurrency rules (README,
        // "Delaying instead of refusing").
        long others = claims.stream().filter(c -> c.rule().maxDelay().isZero() && !c.rule().shadow()
                && !c.rule().algorithm().isConcurrency()).count();
        long delaying = claims.stream().filter(c -> !c.rule().maxDelay().isZero()).count();
        boolean mayDelay = delaying == 1 && others == 0;
        for (int i = 0; i < claims.size(); i++) {
            judge(call, claims.get(i), decisions.all().get(i), decisions,
                    mayDelay ? claims.get(i).rule().maxDelay().toMillis() : 0);
        }
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            Decision decision = decisions.all().get(i);
            String name = claim.rule().name();
            Ledger shared = ledger(STORE, name, claim.key());
            if (storeMayHaveCounted(events, name)
                    || !storeEvents && decision.basis() != Decision.Basis.SHARED) {
                possible(shared, call.op(), t, claim.cost(), call.instance());
            }
            long reservation = call.kind() == Event.Kind.RESERVE ? call.op() : -1;
            // Units held for a slot count from the slot on for the lower bound: they pass then (a
            // slot is told in whole ms rounded up: from the ms before); the upper bound counts them
            // from the decision, as the store's debt holds them.
            long slot = decision.allowed() && decisions.allowed() ? decision.delay().toMillis() : 0;
            long early = Math.max(0, slot - 1);
            if (decision.basis() == Decision.Basis.SHARED) {
                if (decisions.allowed() && decision.allowed()) {
                    shared.add(call.op(), t + early, call.latest(), claim.cost(), Unit.Kind.TAKEN, reservation);
                    lastTake.computeIfAbsent(name + "/" + claim.key(), k -> new HashMap<>()).put(call.instance(), call.op());
                } else if (claim.rule().countRejected()) {
                    shared.add(call.op(), t, call.latest(), claim.cost(), Unit.Kind.ATTEMPT, -1);
                } else if (decision.allowed() && refundDropped(events, name)) {
                    // Taken by the store, owed back because another side rejected, not given back.
                    possible(shared, call.op(), t, claim.cost(), call.instance());
                }
            } else if (decision.basis() == Decision.Basis.LOCAL) {
                Ledger local = ledger(local(call.instance()), name, claim.key());
                if (decisions.allowed() && decision.allowed()) {
                    local.add(call.op(), t + early, call.latest(), localCost(claim), Unit.Kind.TAKEN, reservation);
                } else if (local.current().countRejected()) {
                    local.add(call.op(), t, call.latest(), localCost(claim), Unit.Kind.ATTEMPT, -1);
                }
            }
        }
        if (call.kind() == Event.Kind.RESERVE && decisions.allowed()) {
            reservations.put(call.op(), new Reserved(call, decisions));
        }
        if (storeEvents && !decisions.allowed()) {
            allOrNothing(call, events);
        }
    }

    /**
     * A request rejected after the store allowed its part (another part fell to a policy that
     * rejected: an unreadable state, a failure, {@code on-failure=local}) gives the store back
     * every unit that part took but count-rejected attempts (which stand: asking them back is a
     * violation too), leases among them, within the same
     * call (all or nothing, as one store call is), or is heard dropping the refund. Checked on the store's
     * calls beneath the request, so it does not wait for a lockout to show it later.
     */
    private void allOrNothing(Event.Call call, List<Event> events) {
        for (Event event : events) {
            if (!(event instanceof Event.StoreCall store) || !store.answered() || store.answer() == null
                    || !store.answer().allowed() || !(store.kind().equals("acquire") || store.kind().equals("reserve"))) {
                continue;
            }
            for (Claim claim : store.claims()) {
                String name = claim.rule().name();
                boolean asked = events.stream().anyMatch(e -> e instanceof Event.StoreRefund refund
                        && refund.instance() == store.instance() && refund.asked().contains(name));
                if (!claim.rule().countRejected() && !asked && !refundDropped(events, name)) {
                    violations.add(new Violation("all or nothing: a rejected request gives back what the store took for it",
                            "rejected, but the store allowed " + name + "/" + claim.key() + " x" + claim.cost()
                                    + " for it and was not asked to give it back", call.op(), STORE, name, claim.key(),
                            call.at(), call.latest()));
                } else if (claim.rule().countRejected() && asked) {
                    violations.add(new Violation("all or nothing: a count-rejected rule's attempt stands",
                            "rejected, and the store was asked to give back " + name + "/" + claim.key()
                                    + ", whose attempt a count-rejected rule keeps", call.op(), STORE, name, claim.key(),
                            call.at(), call.latest()));
                }
            }
        }
    }

    private void failedTake(Event.Call call, List<Event> events) {
        for (Claim claim : call.claims()) {
            if (!storeEvents || storeMayHaveCounted(events, claim.rule().name())) {
                possible(ledger(STORE, claim.rule().name(), claim.key()), call.op(), call.at(), claim.cost(),
                        call.instance());
            }
        }
    }

    private void possible(Ledger ledger, long op, long at, long cost, int instance) {
        // On the server clock a lost reply's call ran at Valkey's time then, which may be after
        // the client gave up on it: until the store is next seen answering.
        // A lost take of a rule that delays may have been held for a slot up to its max delay on.
        long hold = ledger.current().maxDelay().toMillis();
        Unit unit = ledger.add(op, at, serverClock ? Long.MAX_VALUE : at + hold, cost, Unit.Kind.POSSIBLE, -1);
        unit.hold = hold;
        if (serverClock) {
            unanswered.computeIfAbsent(ledger.rule + "/" + ledger.key, k -> new ArrayList<>()).add(unit);
        }
        if (ledger.current().algorithm().isConcurrency()) {
            ledger.leaseLost();
            lose(unit, op, instance);
        }
    }

    private void peek(Event.Call call, Event.Decided decided) {
        Claim claim = call.claims().get(0);
        judge(call, claim, decided.decisions().all().get(0), null, claim.rule().maxDelay().toMillis());
    }

    /** The checks of one rule's decision, on the ledger of whoever decided it. */
    private void judge(Event.Call call, Claim claim, Decision decision, Decisions request, long maxDelay) {
        Ledger ledger;
        long cost;
        // Units the store holds in local leases, unseen here (LeaseSlack); none in the fallback.
        Rule leased = null;
        long othersHold = 0;
        if (decision.basis() == Decision.Basis.SHARED) {
            ledger = ledger(STORE, claim.rule().name(), claim.key());
            cost = claim.cost();
            leased = claim.rule();
            othersHold = leaseSlack.othersHold(claim.rule());
        } else if (decision.basis() == Decision.Basis.LOCAL) {
            ledger = ledger(local(call.instance()), claim.rule().name(), claim.key());
            cost = localCost(claim);
        } else {
            return; // a policy's answer: nothing decided
        }
        // Decided at a time in [at, latest] (one instant on the client clock): units are recorded
        // at the earliest, so an allowance and a retry-after are judged at the latest (the most
        // room it can have had) and a rejection at the earliest (the least).
        long t = call.at();
        long latest = call.latest();
        // A request held for a slot passes then, its units counted from then (see take): it is
        // judged there. A rejection by a rule that may delay says no slot within its max delay.
        long slot = decision.delay().toMillis();
        // The rule that decided: the store's, or the fallback's, which may not delay at all.
        maxDelay = Math.min(maxDelay, ledger.current().maxDelay().toMillis());
        if (slot > 0 && (!decision.allowed() || slot > maxDelay)) {
            violations.add(new Violation("a request is held only by a rule that delays, for at most its max delay",
                    "delayed " + slot + " ms by " + ledger.current() + ": " + decision, call.op(), ledger.domain,
                    ledger.rule, ledger.key, t, t + slot));
        }
        report(call.op(), ledger, Bounds.effectiveWindow(claim.rule(), decision, t));
        if (decision.allowed() && request != null && request.allowed()) {
            report(call.op(), ledger, promises.taken(ledger, latest + slot, cost));
        }
        // A decision of a leasing rule shortly after a wipe may be its lease's, taken from the wiped
        // state and counting what that state held (LeaseSlack#afterWipe): its numbers describe a
        // state that is gone, and promise nothing of the new one.
        long wipedLeases = decision.basis() == Decision.Basis.SHARED
                ? leaseSlack.afterWipe(claim.rule(), ledger.wipedAt(), latest) : 0;
        StoreRejection replayed = replayed(call, claim, decision, ledger);
        // A deny cache's replay made after room was made on its key (another instance's give-back
        // or reset, unseen by this instance's cache): its numbers are the store's as of then.
        boolean staleReplay = replayed != null && replayed.room() != ledger.room();
        if (!(decision.allowed() && request != null && !request.allowed()) && !staleReplay && wipedLeases == 0) {
            // A rule that allowed a request others rejected may have been decided apart (the
            // fallback, another cluster slot group) and its units given back after it answered:
            // its numbers then describe a take that was undone, and promise nothing.
            promises.promised(ledger, call.op(), t, decision, othersHold);
        }
        if (decision.allowed()) {
            long at = latest + slot;
            // Of a rule instances lease, an admission may be a lease's, taken before a charge
            // made since and counted then (the history does not see which): what was admitted
            // must stay within the limit, charges above it by design.
            report(call.op(), ledger, leased != null && leaseSlack.leases(leased)
                    ? ledger.admissionsOnly(() -> Bounds.safety(ledger, at, cost, wipedLeases))
                    : Bounds.safety(ledger, at, cost, wipedLeases));
            return;
        }
        if (!(cacheable(claim.rule()) && ledger.mayReplay(t, call.instance())) && !mayBeReplayed(call, claim, decision)) {
            report(call.op(), ledger, liveness(ledger, t + maxDelay, cost, call.op(), leased,
                    call.instance() == Target.OPERATOR));
        }
        // A replay of a rejection made before another instance took units of the key: the cache
        // sees only its own instance (README, "A deny cache"), so its retry-after is the store's as
        // of then and may be early by what the others took; not judged. Other replays are.
        boolean pastOthers = replayed != null && lastTake.getOrDefault(claim.rule().name() + "/" + claim.key(), Map.of())
                .entrySet().stream().anyMatch(e -> e.getKey() != call.instance() && e.getValue() > replayed.op());
        if (!pastOthers) {
            report(call.op(), ledger, early(ledger, latest, cost, decision.retryAfter().toMillis(), maxDelay,
                    wipedLeases));
        }
        if (request != null && !request.unavailable() && !claim.rule().shadow() && !pastOthers
                && request.retryAfter().compareTo(decision.retryAfter()) != 0) {
            report(call.op(), ledger, early(ledger, latest, cost, request.retryAfter().toMillis(), maxDelay,
                    wipedLeases));
        }
    }

    /**
     * A retry-after is never early; by a rule that delays, the request retried then is held for
     * at most the max delay: judged at that slot, held requests passing before it counted.
     */
    private static Bounds.Finding early(Ledger ledger, long latest, long cost, long retryAfter, long maxDelay,
                                        long slack) {
        if (maxDelay == 0) {
            return Bounds.early(ledger, latest, cost, retryAfter, slack);
        }
        return Bounds.early(ledger, latest + retryAfter + maxDelay, cost, 0, slack);
    }

    /**
     * The store's rejection a deny cache's replay repeats (a rejection no store call beneath
     * decided), or null for any other decision; a rejection the store made is recorded here.
     */
    private StoreRejection replayed(Event.Call call, Claim claim, Decision decision, Ledger ledger) {
        if (decision.basis() != Decision.Basis.SHARED || decision.allowed() || call.kind() == Event.Kind.PEEK) {
            // A peek is never a replay, nor does the cache remember its rejection: a replay after
            // it repeats the take's rejection before it (seed 9142 VALKEY_RESILIENT took the
            // peek's for it, and judged a replay past another instance's take).
            return null;
        }
        String which = call.instance() + "/" + claim.rule().name() + "/" + claim.key();
        if (decidedByStore(claim)) {
            storeRejected.put(which, new StoreRejection(call.op(), ledger.room()));
            return null;
        }
        return storeRejected.get(which);
    }

    /** Whether the store answered a call on the claim's rule and key beneath the operation judged (not a replay). */
    private boolean decidedByStore(Claim claim) {
        return current.stream().anyMatch(e -> e instanceof Event.StoreCall store && store.answered()
                && store.claims().stream().anyMatch(c -> c.rule().name().equals(claim.rule().name())
                && c.key().equals(claim.key())));
    }

    /** The longest an allowed call on a fixed window's key took in the window of {@code t}, 0 if none. */
    private long longestLeaseTake(Rule rule, Ledger ledger, long t) {
        long[] longest = longestTake.get(ledger.rule + "/" + ledger.key);
        return longest != null && longest[0] == Calendars.window(rule, t)[0] ? longest[1] : 0;
    }

    /**
     * Whether a rejection may be a deny cache's replay of one the store made, still within the
     * hold the cache counts from when that answer came back (server clock only: the store
     * decided up to that call's length earlier, so the cache may replay past the moment the
     * store would have room again, by as much). A rejection the store made now is never one.
     */
    private boolean mayBeReplayed(Event.Call call, Claim claim, Decision decision) {
        if (!serverClock || decision.basis() != Decision.Basis.SHARED) {
            return false;
        }
        String which = call.instance() + "/" + claim.rule().name() + "/" + claim.key();
        if (decidedByStore(claim)) {
            replayUntil.merge(which, call.latest() + decision.retryAfter().toMillis(), Math::max);
            return false;
        }
        return call.at() < replayUntil.getOrDefault(which, Long.MIN_VALUE);
    }

    /**
     * The server of a rule and key answered a call on it at {@code at}: the lost replies sent to it
     * before had run by then (one event loop; on a cluster, another node's answer says nothing).
     */
    private void answeredAgain(String which, long at) {
        List<Unit> units = unanswered.remove(which);
        for (Unit unit : units == null ? List.<Unit>of() : units) {
            unit.latest = Math.max(unit.at, at) + unit.hold;
        }
    }

    /**
     * A key's TTL (server clock) is no longer than its state is needed (README, "Key design":
     * no slack on the server clock): it ends by the end of the state that any write up to the
     * read can have left, under the rule's settings, once every state written under settings
     * before its last edit has ended. 1 ms for TIME and PTTL each rounding down to the ms.
     */
    private void ttl(Event.Ttl ttl) {
        Rule rule = ttl.rule();
        if (ttl.pttl() == -2 || ttl.at() < ttlFrom.getOrDefault(rule.name(), Long.MIN_VALUE)) {
            return;
        }
        String invariant = "ttl: a key lives no longer than its state is needed";
        if (ttl.pttl() == -1) {
            violations.add(new Violation(invariant, "key " + ttl.stateKey() + " has no TTL", ttl.op(), STORE,
                    rule.name(), ttl.key(), ttl.at(), ttl.after()));
            return;
        }
        long end = stateEnd(rule, ttl.after(), debtBuckets);
        if (ttl.pttl() > end - ttl.at() + 1) {
            violations.add(new Violation(invariant, "key " + ttl.stateKey() + " had a TTL of " + ttl.pttl()
                    + " ms read in [" + ttl.at() + ", " + ttl.after() + "]: it outlives " + end + ", the end of any "
                    + rule.algorithm().id() + " state of " + rule.window().toMillis() + " ms written by then, by "
                    + (ttl.pttl() - (end - ttl.at())) + " ms", ttl.op(), STORE, rule.name(), ttl.key(), ttl.at(),
                    ttl.after()));
        }
    }

    /**
     * The latest a state written at or before {@code w} under the rule can still matter: a
     * fixed window's end; the newest log entry's time plus the window; a sliding window
     * counter's current window's end plus one window; a bucket's refill of the most debt it can
     * hold (two full buckets: a counted rejection overdraws by one); the newest lease's timeout.
     */
    static long stateEnd(Rule rule, long w) {
        return stateEnd(rule, w, 2);
    }

    /** {@link #stateEnd(Rule, long)} for a bucket that may hold {@code debtBuckets} full buckets of debt. */
    static long stateEnd(Rule rule, long w, long debtBuckets) {
        long window = rule.window().toMillis();
        return switch (rule.algorithm()) {
            case FIXED_WINDOW -> Calendars.window(rule, w)[1];
            case SLIDING_LOG, CONCURRENCY -> w + window;
            case SLIDING_WINDOW_COUNTER -> w - Math.floorMod(w, window) + 2 * window;
            // Held requests add at most the max delay's refill beyond the bucket.
            case TOKEN_BUCKET, GCRA -> w + Ledger.ceilDiv(debtBuckets * rule.burst() * window, rule.limit())
                    + rule.maxDelay().toMillis();
        };
    }

    /** The longest a state written under the rule can matter after its write (see {@link #stateEnd}). */
    static long lifetime(Rule rule) {
        return lifetime(rule, 2);
    }

    /** {@link #lifetime(Rule)} for a bucket that may hold {@code debtBuckets} full buckets of debt. */
    static long lifetime(Rule rule, long debtBuckets) {
        long window = rule.window().toMillis();
        return switch (rule.algorithm()) {
            case FIXED_WINDOW -> Calendars.longest(rule);
            case SLIDING_LOG, CONCURRENCY -> window;
            case SLIDING_WINDOW_COUNTER -> 2 * window;
            case TOKEN_BUCKET, GCRA -> Ledger.ceilDiv(debtBuckets * rule.burst() * window, rule.limit())
                    + rule.maxDelay().toMillis();
        };
    }

    /**
     * Liveness with what leases may hold in the store beyond the history (LeaseSlack): the
     * most first, then the least, and only between the two the exact allowance, which walks the
     * history once per fault.
     */
    private Bounds.Finding liveness(Ledger ledger, long t, long cost, long op, Rule leased, boolean outsider) {
        if (leased == null) {
            return Bounds.liveness(ledger, t, cost, op);
        }
        if (serverClock && leased.algorithm() == dev.ratelimit.Algorithm.FIXED_WINDOW && leaseSlack.leases(leased)
                && Calendars.window(leased, t)[1] - t <= longestLeaseTake(leased, ledger, t) + LEASE_CLOCK_MILLIS) {
            // A fixed window's lease ends reset-after past the lease clock's time before its
            // call was sent (Lease.taken), so up to that call's length (and a ms of each clock's
            // rounding) before Valkey's window does: it then gives nothing back (its window over)
            // while the store still counts its units, and the instance may be refused for its
            // own lease until the window really ends.
            return null;
        }
        Bounds.Finding most = Bounds.liveness(ledger, t, cost + leaseSlack.mostWithheld(leased, outsider), op);
        if (most != null || Bounds.liveness(ledger, t, cost + leaseSlack.leastWithheld(leased, outsider), op) == null) {
            return most;
        }
        return Bounds.liveness(ledger, t, cost + leaseSlack.withheld(leased, ledger, t, outsider), op);
    }

    /**
     * Whether a deny cache may remember a rejection of the rule (README, "A deny cache"): never a
     * concurrency rule's, a count-rejected one's or a shadow rule's.
     */
    private static boolean cacheable(Rule rule) {
        return !rule.algorithm().isConcurrency() && !rule.countRejected() && !rule.shadow();
    }

    private void report(long op, Ledger ledger, Bounds.Finding finding) {
        if (finding != null) {
            violations.add(new Violation(finding.invariant(), finding.message(), op, ledger.domain, ledger.rule,
                    ledger.key, finding.from(), finding.to()));
        }
    }

    private void reset(Event.Call call, List<Event> events) {
        Claim claim = call.claims().get(0);
        String name = claim.rule().name();
        boolean answered = events.stream().anyMatch(e -> e instanceof Event.StoreCall s && s.kind().equals("reset")
                && s.answered());
        // Another instance's deny cache still remembers rejections from before: for it, the
        // state was deleted behind its back. An operator's reset is behind every instance's.
        boolean operator = call.instance() == Target.OPERATOR;
        // At the latest it can have happened: liveness then waits the longest after it.
        ledger(STORE, name, claim.key()).wipe(call.latest(), answered, instances > 1 || operator, denyCacheHoldMs);
        if (localRules.containsKey(name) && !operator) {
            // The fallback is reset first, in process: it cannot fail.
            ledger(local(call.instance()), name, claim.key()).wipe(call.at(), true, false, denyCacheHoldMs);
        }
    }

    private void settle(Event.Settled settled, List<Event> events) {
        Reserved reserved = reservations.get(settled.reservation());
        if (reserved == null) {
            return;
        }
        if (settled.how().equals("commit-cost")) {
            settleByCost(settled, events, reserved);
            return;
        }
        List<Claim> claims = reserved.call().claims();
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            String name = claim.rule().name();
            if (!settled.asked().contains(name)) {
                continue;
            }
            String domain = domain(reserved, i);
            Ledger ledger = domain == null ? null : ledger(domain, name, claim.key());
            Unit unit = unsettled(ledger, settled);
            if (unit == null) {
                continue;
            }
            boolean trouble = domain.equals(STORE) && (settled.error() != null || refundDropped(events, name));
            if (trouble) {
                unit.refund = Unit.Refund.MAYBE;
                unit.refundAt = settled.at();
                ledger.roomMade();
                if (claim.rule().algorithm().isConcurrency()) {
                    ledger.leaseLost();
                    lose(unit, settled.op(), reserved.call().instance());
                }
            } else if (settled.how().equals("commit") || settled.given() != null && settled.given().contains(name)) {
                if (!settled.how().equals("commit")) {
                    report(settled.op(), ledger, refundedAfterItsWindow(claim.rule(), ledger, unit, settled.began()));
                }
                // A commit asks only leases, and releases them (or finds them timed out).
                unit.refund = Unit.Refund.GIVEN;
                unit.refundAt = settled.at();
                ledger.roomMade();
                if (instances > 1 && denyCacheHoldMs > 0) {
                    // Another instance's deny cache cannot see this give-back: it may replay its
                    // rejection for up to its hold (README, ratelimit.deny-cache.max-hold); this
                    // instance's forgets it.
                    ledger.othersMayReplay(settled.at(), settled.at() + denyCacheHoldMs, reserved.call().instance());
                }
            }
        }
    }

    /** Where claim {@code i} of a reservation was counted: the store, the instance's fallback, or nowhere (null). */
    private String domain(Reserved reserved, int i) {
        Decision decision = reserved.decisions().all().get(i);
        return decision.basis() == Decision.Basis.SHARED ? STORE
                : decision.basis() == Decision.Basis.LOCAL ? local(reserved.call().instance()) : null;
    }

    /** The units a settlement's reservation took in a ledger, if they are there and not settled yet; else null. */
    private static Unit unsettled(Ledger ledger, Event.Settled settled) {
        Unit unit = ledger == null ? null : ledger.ofReservation(settled.reservation());
        return unit == null || unit.refund != Unit.Refund.NONE ? null : unit;
    }

    /**
     * A settlement by a cost known after the work ({@code Reservation.commit(actual)}): per
     * rule, a cost below the reservation's gives the difference back (exactly where the store
     * said it gave back a window's or a log's, in part for a bucket; maybe, where the fallback
     * did it or it failed); a cost above charges the rest at the settlement's time, counted for
     * certain where the store said it charged it whole, maybe otherwise (cut at the debt's
     * bound, a lost reply, the fallback's overdraw); a concurrency rule's lease is released as a
     * commit releases it. Charges go first, the give-backs after them whatever happened: a
     * settlement that threw charged nothing for certain, and gave back maybe.
     */
    private void settleByCost(Event.Settled settled, List<Event> events, Reserved reserved) {
        Event.StoreCharge byStore = null;
        for (Event event : events) {
            if (event instanceof Event.StoreCharge charge && charge.reservation() == settled.reservation()) {
                byStore = charge;
            }
        }
        boolean storeAnswered = byStore != null && byStore.error() == null && settled.error() == null;
        List<Claim> claims = reserved.call().claims();
        for (int i = 0; i < claims.size(); i++) {
            Claim claim = claims.get(i);
            Rule rule = claim.rule();
            String name = rule.name();
            String domain = domain(reserved, i);
            Ledger ledger = domain == null ? null : ledger(domain, name, claim.key());
            Unit unit = unsettled(ledger, settled);
            if (unit == null) {
                continue;
            }
            boolean store = domain.equals(STORE);
            if (rule.algorithm().isConcurrency()) {
                if (store && (!storeAnswered || byStore.refundDropped().contains(name))) {
                    unit.refund = Unit.Refund.MAYBE;
                    ledger.leaseLost();
                    lose(unit, settled.op(), reserved.call().instance());
                } else {
                    unit.refund = Unit.Refund.GIVEN;
                }
                unit.refundAt = settled.at();
                ledger.roomMade();
                continue;
            }
            long reservedCost = unit.cost;
            long actual = settled.actual();
            if (actual < reservedCost) {
                boolean given = store && storeAnswered && byStore.given().contains(name);
                boolean failed = store && (!storeAnswered || byStore.refundDropped().contains(name)
                        || refundDropped(events, name));
                if (given && !failed) {
                    if (rule.algorithm().hasBurst()) {
                        // A bucket keeps what refill it would have lost: at least the cost, maybe more.
                        unit.kept = actual;
                    } else {
                        report(settled.op(), ledger, refundedAfterItsWindow(rule, ledger, unit, settled.began()));
                        unit.kept = actual;
                    }
                    unit.refundAt = settled.at();
                    ledger.roomMade();
                } else if (failed || !store) {
                    // The store's refund that failed, or the fallback's, which the history does not see.
                    unit.refund = Unit.Refund.MAYBE;
                    unit.refundAt = settled.at();
                    ledger.roomMade();
                }
                continue;
            }
            if (actual > reservedCost && dev.ratelimit.internal.Charges.supports(rule.algorithm())) {
                long units = Math.min(actual - reservedCost, dev.ratelimit.internal.Charges.DEBT_BUCKETS * rule.capacity());
                boolean whole = store && storeAnswered && byStore.charged().contains(name);
                Rule as = store ? rule : localRules.get(name);
                if (!ledger.current().equals(as)) {
                    // Charged under the rule the request was admitted by, edited since: the state
                    // is written under the old rule again, which the current one reads as after
                    // an edit (safety restarts; liveness waits out both horizons).
                    ledger.rewritten(as, settled.began());
                    whole = false;
                    if (store) {
                        // A state written under the old settings after the edit ends on their terms.
                        ttlFrom.merge(name, settled.at() + lifetime(as, debtBuckets), Math::max);
                    }
                }
                // On the server clock a charge whose reply was lost ran at Valkey's time then, which
                // may be after the client gave up on it: until the store is next seen answering
                // (as a lost call's units, see possible).
                boolean lost = store && !storeAnswered && serverClock;
                Unit charged = ledger.charge(settled.op(), settled.began(), lost ? Long.MAX_VALUE : settled.at(), units,
                        whole, -1);
                if (lost) {
                    unanswered.computeIfAbsent(ledger.rule + "/" + ledger.key, k -> new ArrayList<>()).add(charged);
                }
                if (store && !storeAnswered && localRules.containsKey(name)) {
                    // The store did not take it: a local policy's fallback counts it instead, up to
                    // its own rule's bound of debt (eight of its buckets, not eight of the cost).
                    ledger(local(reserved.call().instance()), name, claim.key()).charge(settled.op(), settled.began(),
                            settled.at(), Math.min(units, localRules.get(name).capacity()
                                    * dev.ratelimit.internal.Charges.DEBT_BUCKETS), false, -1);
                }
            }
        }
    }

    /**
     * A window algorithm's refund said given back though the units' window had ended by then:
     * they no longer counted where they were taken (a fixed window's or sliding window counter's
     * window over, a sliding log's entry out of its window), and giving them back would make room
     * in another window. The store's word on a refund is trusted by the upper bound, so it is
     * held to this here. Judged only where it is certain: the units' window is known (the take's
     * earliest and latest times lie in one), the rule's window is as it was, and no local lease
     * stands between (a lease takes its units back itself).
     *
     * @param taken   the rule as the units were taken
     * @param refundAt the earliest the refund can have run (its call's start)
     */
    private Bounds.Finding refundedAfterItsWindow(Rule taken, Ledger ledger, Unit unit, long refundAt) {
        Rule now = ledger.current();
        boolean sameWindow = now.algorithm() == taken.algorithm() && now.window().equals(taken.window())
                && java.util.Objects.equals(now.calendar(), taken.calendar());
        if (!sameWindow || unit.latest == Long.MAX_VALUE || leaseSlack.leases(taken)) {
            return null;
        }
        long end;
        switch (taken.algorithm()) {
            case FIXED_WINDOW, SLIDING_WINDOW_COUNTER -> {
                long[] window = Calendars.window(taken, unit.at);
                if (window[1] <= unit.latest) {
                    return null; // taken across a window's end: which window is not known
                }
                end = window[1];
            }
            case SLIDING_LOG -> end = unit.latest + taken.window().toMillis();
            default -> {
                return null; // buckets give back part; leases are released whenever held
            }
        }
        if (refundAt < end) {
            return null;
        }
        return new Bounds.Finding(taken.algorithm().id() + ": a refund gives nothing back once the units' window has ended",
                "the refund at " + refundAt + " of " + unit.cost + " taken at " + unit.at
                        + (unit.latest == unit.at ? "" : ".." + unit.latest) + " said given back, but their window ended at "
                        + end, unit.at, refundAt);
    }

    /**
     * Whether a store call of this operation that included the rule threw after it may have run.
     * A history that does not record the store's calls (a layer that cannot see them) takes every
     * claim not decided by the store as possibly counted instead (see {@link #take}).
     */
    private static boolean storeMayHaveCounted(List<Event> events, String rule) {
        for (Event event : events) {
            if (event instanceof Event.StoreCall store && !store.answered() && store.unreadable() == null
                    && (store.kind().equals("acquire") || store.kind().equals("reserve"))
                    && store.claims().stream().anyMatch(c -> c.rule().name().equals(rule))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a refund of the rule owed in this operation was dropped (threw, or the listener
     * heard so). A history without the store's calls has the listener's word only.
     */
    private static boolean refundDropped(List<Event> events, String rule) {
        for (Event event : events) {
            if (event instanceof Event.Heard heard && heard.rule().equals(rule) && heard.event().equals("REFUND_DROPPED")
                    || event instanceof Event.StoreRefund refund && refund.error() != null
                    && refund.asked().contains(rule)) {
                return true;
            }
        }
        return false;
    }

    private void lose(Unit unit, long op, int instance) {
        unit.lost = true;
        unit.lostOp = op;
        unit.lostInstance = instance;
        lost.add(unit);
    }

    /** An instance's store answered: the grace of the leases it lost before starts. */
    private void storeAnswered(long real, long op, int instance) {
        for (Unit unit : lost) {
            if (unit.answeredReal < 0 && unit.lostOp < op && unit.lostInstance == instance) {
                unit.answeredReal = real;
            }
        }
    }

    /** An acquiring call the store answered, begun at real ms {@code real}: a chance to release lost leases. */
    private void chance(long real, long op, int instance) {
        for (Iterator<Unit> it = lost.iterator(); it.hasNext(); ) {
            Unit unit = it.next();
            if (unit.lostInstance != instance || unit.answeredReal < 0 || unit.lostOp >= op
                    || real < unit.answeredReal + FIRST_CHANCE_MILLIS) {
                continue;
            }
            if (unit.chances == 0 || real >= unit.lastChanceReal + CHANCE_SPACING_MILLIS) {
                unit.chances++;
                unit.lastChanceReal = real;
                if (unit.chances >= CHANCES) {
                    unit.freeAfterOp = op;
                    it.remove();
                }
            }
        }
    }
}
