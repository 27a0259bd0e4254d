package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Runs an {@link HttpWorkload} against the filter on Jetty, one request at a time, and records
 * the same history as the API targets: per request the rules it matched with the rule each
 * holds the caller to (own, plan, provided limit; a {@link Event.RuleSet} for the key whenever
 * that changes), key and cost ({@link Event.Call}, decided within [sent, reached the
 * application]), the filter's per-rule decisions as its listener reported them on the request
 * thread with the {@code RateLimit} field's {@code r} and {@code t} and the {@code Retry-After}
 * ({@link Event.Decided}), what the client saw ({@link Event.Response}), and the units the
 * rules' settings give back by the response's status ({@link Event.Settled}; uncertain when the
 * client left before the head).
 *
 * <p>The rule a request is held to is the checker's own reading of the settings, never the
 * filter's: a plan only from a header the trusted proxy sent, the provider's answer (as it
 * gave it, which the filter caches per rule, algorithm, window and key) applied to the rule of
 * the moment unless the rule's cost does not fit in it.
 */
final class HttpRunner {

    private final HttpWorkload workload;
    private final HttpApp app;
    private final History history;
    private final List<HttpWorkload.Spec> rules;
    private final List<HttpWorkload.Spec> methodRules;
    /** The rule each "rule/key" was last recorded as held to. */
    private final Map<String, Rule> held = new HashMap<>();
    private long nextOp = 1;
    private int probes;
    /** Readings of the settings put, in this JVM: each one's number tells it from the one before. */
    private static final java.util.concurrent.atomic.AtomicInteger READINGS = new java.util.concurrent.atomic.AtomicInteger();
    /** The number of the reading last put. */
    private int reading;

    HttpRunner(HttpWorkload workload, HttpApp app, History history) {
        this.workload = workload;
        this.app = app;
        this.history = history;
        this.rules = new ArrayList<>(workload.rules());
        this.methodRules = new ArrayList<>(workload.methodRules());
    }

    /** Applies the workload's settings, then runs every step. */
    void run() {
        for (int i = 0; i < workload.keys().size(); i++) {
            app.provider().answers.remove(key(i, false));
            app.provider().answers.remove(key(i, true));
        }
        // The run's date, whatever the day: the filter's windows, calendar periods and fields are those of the seed's.
        app.startClockAt(workload.clockStart());
        putSettings();
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("denyCache", workload.denyCache());
        options.put("pipelines", workload.pipelines());
        // The filter's calls to Valkey are not seen: every claim it did not decide may have counted.
        options.put("storeEvents", false);
        options.put("clock", "wall from " + java.time.Instant.ofEpochMilli(workload.clockStart()));
        options.put("keys", workload.keys());
        options.put("steps", workload.steps().size());
        options.put("avoided", workload.avoided().stream().map(Enum::name).sorted().toList());
        options.put("clientIpHeader", workload.network().header());
        options.put("ipv6Prefix", workload.network().ipv6Prefix());
        options.put("trustedProxies", workload.network().trustedProxies());
        options.put("peers", List.of(workload.network().trustedPeer(), workload.network().untrustedPeer()));
        long now = app.now();
        history.add(new Event.Start(0, now, history.real(), workload.seed(), "HTTP", options));
        for (HttpWorkload.Spec spec : allRules()) {
            history.add(new Event.RuleSet(0, now, history.real(), spec.rule(), "open", null, "initial"));
        }
        for (HttpWorkload.Step step : workload.steps()) {
            if (step instanceof HttpWorkload.Request request) {
                request(request);
            } else if (step instanceof HttpWorkload.Edit edit) {
                edit(edit);
            } else if (step instanceof HttpWorkload.Answer answer) {
                app.provider().answers.put(key(answer.key(), false), answer.answer());
                app.provider().answers.put(key(answer.key(), true), answer.answer());
            }
        }
    }

    /** The key a caller is counted under, as the filter builds it from X-Caller or the caller parameter. */
    private String key(int index, boolean byParam) {
        return (byParam ? "param.caller:" : "header.x-caller:") + workload.keys().get(index);
    }

    /**
     * One layer's decision of a request.
     *
     * @param op       its call's operation
     * @param specs    the rules decided, in order
     * @param claims   their claims, in the same order
     * @param decided  the decisions read back, or null when nothing was decided
     * @param reserved whether its units may be given back (by the response's status, or a refusal by another layer)
     */
    private record Part(long op, List<HttpWorkload.Spec> specs, List<Claim> claims, Decisions decided,
                        boolean reserved) {

        boolean allowed() {
            return decided == null || decided.allowed();
        }

        /** The rules the fields announce: those decided, allowing or rejecting. */
        List<String> announced() {
            List<String> names = new ArrayList<>();
            for (int i = 0; decided != null && i < claims.size(); i++) {
                if (decided.all().get(i).basis() == Decision.Basis.SHARED) {
                    names.add(claims.get(i).rule().name());
                }
            }
            return names;
        }
    }

    private void request(HttpWorkload.Request request) {
        AlignedWindows.await(allRules(), app::now);
        String id = UUID.randomUUID().toString();
        HttpApp.Trace trace = app.trace(id);
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-Check-Id", id);
        String caller = workload.keys().get(request.key());
        String queryCaller = request.queryKey() < 0 ? null : workload.keys().get(request.queryKey());
        headers.put("X-Caller", caller);
        if (request.plan() != null) {
            headers.put("X-Plan", request.plan());
        }
        if (request.user()) {
            headers.put("X-User", caller);
        }
        if (request.pre() != null) {
            headers.put("X-Pre", request.pre());
        }
        for (HttpForwarding.Header header : request.forwarding()) {
            headers.put(header.name(), String.join("\n", header.text())); // a line each
        }
        boolean trusted = request.from().equals("trusted");
        // The client address by the checker's own reading of the README, not the filter's code.
        String address = HttpForwarding.client(workload.network(), trusted, request.forwarding());
        HttpMethods.Method method = request.method() < 0 ? null : HttpMethods.METHODS.get(request.method());
        String path = method == null ? "/s" + request.mask() + "/o"
                : method.target(request.mask() == 0 ? "/j/" : "/s" + request.mask() + "/j/", caller);
        String target = path + "?status=" + request.status() + (queryCaller == null ? "" : "&caller=" + queryCaller)
                + switch (request.app()) {
                    case "slow" -> "&sleep=" + (request.client() == HttpCall.Client.READS ? 30 : 150);
                    case "async" -> "&async=1&sleep=" + (request.status() % 3) * 10;
                    case "throw" -> "&throw=1";
                    case "stream" -> "&stream=1";
                    default -> "";
                };
        long sent = app.now();
        HttpCall.Seen seen = HttpCall.get(app.port(), trusted ? workload.network().trustedPeer()
                : workload.network().untrustedPeer(), target, headers, request.client());
        awaitFinished(trace, id);
        long latest = trace.reached >= 0 ? Math.min(trace.reached, trace.finished) : trace.finished;
        app.forget(id);
        // The filter decides the mask's route rules, keyed by its own reading of the request: the
        // X-Caller header, or the query's caller (whatever the path says), or the client address
        // (the principal first, for principal-or-ip).
        List<HttpWorkload.Spec> routed = new ArrayList<>();
        List<String> routedKeys = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            HttpWorkload.Spec spec = rules.get(i);
            if ((request.mask() & 1 << i) == 0) {
                continue;
            }
            if (spec.address() != null) {
                routed.add(spec);
                routedKeys.add(spec.address().equals("principal-or-ip") && request.user() ? "user:" + caller
                        : "ip:" + address);
            } else if (!spec.byParam() || queryCaller != null) {
                routed.add(spec);
                routedKeys.add(spec.byParam() ? key(request.queryKey(), true) : key(request.key(), false));
            }
        }
        // The method then decides its method rules, keyed by what it receives.
        List<HttpWorkload.Spec> named = new ArrayList<>();
        List<String> namedKeys = new ArrayList<>();
        String received = method == null ? null : method.cdi() ? queryCaller : method.receives(caller, queryCaller);
        for (int i = 0; method != null && received != null && i < methodRules.size(); i++) {
            if ((method.rules() & 1 << i) != 0) {
                named.add(methodRules.get(i));
                namedKeys.add("param.caller:" + received);
            }
        }
        boolean methodRuns = method != null;
        Part filter = routed.isEmpty() ? null
                : record(request, routed, routedKeys, sent, latest, seen, trace, false, methodRuns && !named.isEmpty());
        Part byMethod = null;
        if (!named.isEmpty() && (filter == null || filter.allowed())) {
            byMethod = record(request, named, namedKeys, sent, latest, seen, trace, method.cdi(), false);
        }
        if (filter != null && filter.allowed() && byMethod != null && !byMethod.allowed()) {
            // One request, one account: the method's refusal gives back what the filter took, but
            // what count-rejected rules recorded.
            List<String> back = new ArrayList<>();
            for (int j = 0; j < filter.claims().size(); j++) {
                if (!filter.claims().get(j).rule().countRejected() && filter.decided() != null
                        && filter.decided().all().get(j).allowed()) {
                    back.add(filter.claims().get(j).rule().name());
                }
            }
            history.add(new Event.Settled(nextOp++, latest, history.real(), filter.op(), "refused by the method",
                    back, back, null));
        }
        Part last = byMethod != null ? byMethod : filter;
        if (last == null) {
            return;
        }
        List<String> decided = new ArrayList<>(filter == null ? List.of() : filter.announced());
        if (byMethod != null) {
            decided.addAll(byMethod.announced());
        }
        int expected = request.client() == HttpCall.Client.READS || request.client() == HttpCall.Client.HANGS_UP_MID_BODY
                ? (request.app().equals("throw") ? 500 : request.status()) : -1;
        history.add(new Event.Response(last.op(), latest, history.real(), seen.status(), expected,
                seen.headers().get("ratelimit"), seen.headers().get("retry-after"),
                (method == null ? "" : "method " + (request.mask() == 0 ? "" : "under filter ")
                        + (byMethod == null ? "refused by the filter " : "") + method.path() + " ")
                        + request.app() + " " + request.client().name().toLowerCase() + " from " + request.from()
                        + forwarding(request, address)
                        + (request.plan() == null ? "" : " plan " + request.plan())
                        + (queryCaller == null ? " no query caller" : queryCaller.equals(caller) ? "" : " query caller "
                        + queryCaller) + (request.pre() == null ? "" : " pre " + request.pre()),
                seen.headers().get("ratelimit-policy"), decided,
                seen.body() == null ? null : new Event.Answer(request.pre(), seen.headers(), seen.body(), seen.framing(),
                        seen.trailers())));
        for (Part part : new Part[] {filter, byMethod}) {
            if (part == null || !part.reserved() || !part.allowed() || part.decided() == null) {
                continue;
            }
            if (part == filter && byMethod != null && !byMethod.allowed()) {
                continue; // given back whole by the method's refusal
            }
            if (part == byMethod && method.cdi()) {
                if (request.status() >= 400) {
                    // The bean threw Refused, listed to give the call back.
                    List<String> names = part.claims().stream().map(c -> c.rule().name()).toList();
                    history.add(new Event.Settled(nextOp++, app.now(), history.real(), part.op(),
                            "refused", names, names, null));
                }
                continue;
            }
            settle(part.op(), part.specs(), part.claims(), seen, request);
        }
    }

    /** What a response's account says of the request's address: the headers sent, and the client they make. */
    private static String forwarding(HttpWorkload.Request request, String address) {
        StringBuilder out = new StringBuilder();
        for (HttpForwarding.Header header : request.forwarding()) {
            out.append(' ').append(header.name()).append(' ').append(header.text());
        }
        return out + (request.user() ? " user" : "") + " client " + address;
    }

    /** The route rules and the method rules. */
    private List<HttpWorkload.Spec> allRules() {
        List<HttpWorkload.Spec> all = new ArrayList<>(rules);
        all.addAll(methodRules);
        return all;
    }

    /**
     * Records one layer's decision of the request (the filter's or the annotated method's) on its
     * rules.
     *
     * @param specs      the rules it decides
     * @param keys       their keys, by the checker's own reading of the request
     * @param cdi        whether the CDI bean decides (its units reserved, given back when it throws)
     * @param mayBeGivenBack whether a layer after it may refuse the request and give its units back
     * @return the part
     */
    private Part record(HttpWorkload.Request request, List<HttpWorkload.Spec> specs, List<String> keys, long sent,
                        long latest, HttpCall.Seen seen, HttpApp.Trace trace, boolean cdi, boolean mayBeGivenBack) {
        long op = nextOp++;
        boolean trusted = request.from().equals("trusted");
        List<Claim> claims = new ArrayList<>();
        boolean reserve = cdi || mayBeGivenBack;
        for (int j = 0; j < specs.size(); j++) {
            HttpWorkload.Spec spec = specs.get(j);
            String key = keys.get(j);
            Rule plan = trusted && request.plan() != null ? spec.plan(request.plan()) : spec.rule();
            Rule rule = HttpDecisions.provided(app.provider(), plan, key, spec.cost());
            Rule before = held.put(rule.name() + "/" + key, rule);
            if (!rule.equals(before)) {
                history.add(new Event.RuleSet(op, sent, history.real(), rule, "open", null,
                        before == null ? "held" : "changed", key));
            }
            claims.add(Claim.of(rule, key, spec.cost()));
            reserve |= spec.outcome() != null;
        }
        if (AlignedWindows.straddles(allRules(), sent, latest)) {
            history.add(new Event.Fault(op, sent, history.real(), "time-uncertain", null, null,
                    "decided in [" + sent + ", " + latest + "], across an aligned window's start"));
        }
        history.add(new Event.Call(op, sent, history.real(), reserve ? Event.Kind.RESERVE : Event.Kind.ACQUIRE,
                claims, 0, latest));
        Decisions decisions = HttpDecisions.of(claims, trace, seen);
        if (decisions == null) {
            history.add(new Event.Failed(op, latest, history.real(), "the filter decided nothing: " + trace.events, null));
        } else {
            history.add(new Event.Decided(op, latest, history.real(), decisions));
        }
        return new Part(op, specs, claims, decisions, reserve);
    }

    /**
     * The units the rules' settings give back for the response: by the status the client saw
     * (a committed status stands, even when the client then hung up); unknown, so maybe given
     * back, when it left before the head.
     */
    private void settle(long reservation, List<HttpWorkload.Spec> specs, List<Claim> claims, HttpCall.Seen seen,
                        HttpWorkload.Request request) {
        List<String> asked = new ArrayList<>();
        for (int j = 0; j < claims.size(); j++) {
            HttpWorkload.Spec spec = specs.get(j);
            boolean maybe = seen.status() < 0 && spec.outcome() != null;
            if (maybe || seen.status() >= 0 && spec.givesBack(seen.status())) {
                asked.add(claims.get(j).rule().name());
            }
        }
        if (asked.isEmpty()) {
            return;
        }
        long op = nextOp++;
        long at = app.now();
        String error = seen.status() < 0 ? "the client left before the head (" + request.client() + "): the outcome "
                + "it was settled by is not known" : null;
        history.add(new Event.Settled(op, at, history.real(), reservation, "outcome", asked,
                error == null ? asked : null, error));
    }

    private void edit(HttpWorkload.Edit edit) {
        List<HttpWorkload.Spec> edited = edit.method() ? methodRules : rules;
        HttpWorkload.Spec spec = edited.get(edit.rule());
        Rule old = spec.rule();
        Rule rule = Rule.of(old.name(), old.algorithm(), edit.limit(), Duration.ofMillis(edit.windowMs()))
                .withCountRejected(old.countRejected());
        if (old.algorithm().hasBurst()) {
            rule = rule.toBuilder().burst(edit.burst()).build();
        }
        if (edit.calendar() != null) {
            rule = rule.toBuilder().calendar(Calendars.parse(edit.calendar())).build();
        }
        edited.set(edit.rule(), spec.withRule(rule));
        putSettings();
        // Recorded per key at each key's next request (the rule it is held to changed).
    }

    /** Puts the settings as they are now, as a reading of its own number, and waits until a refresh has applied them. */
    private void putSettings() {
        reading = 1 + READINGS.getAndIncrement() % 1000;
        app.settings().putAll(HttpSettings.of(rules, methodRules, workload.denyCache(), workload.network(), reading));
        awaitSettings();
    }

    /**
     * Waits until a refresh has applied the settings: its reading's number announced by rule
     * {@code g} (a run's settings may announce the same policies as the run's before), and a new caller's requests show every rule as
     * set, the route rules through the filter alone and the method rules through two methods alone
     * that name them all ({@code acd} and {@code b}). Each rule's own item is looked for, whatever
     * else the field holds: which rules a response names is {@link HttpChecks}' to judge.
     */
    private void awaitSettings() {
        int all = (1 << rules.size()) - 1;
        awaitPolicy("/gen/o?caller=", () -> List.of("\"" + HttpSettings.GENERATION_RULE + "\";q=" + reading + ";w="
                + HttpWorkload.WINDOWS[0] / 1000));
        awaitPolicy("/s" + all + "/o?caller=", () -> policy(rules, all));
        awaitPolicy("/j/acd/", () -> policy(methodRules, 0b1101));
        awaitPolicy("/j/b?caller=", () -> policy(methodRules, 0b0010));
    }

    /** The RateLimit-Policy items of the rules of a mask. */
    private List<String> policy(List<HttpWorkload.Spec> specs, int mask) {
        long now = app.now();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            if ((mask & 1 << i) == 0) {
                continue;
            }
            Rule rule = specs.get(i).rule();
            // A calendar window's w is its current period's length.
            long quotaMillis = rule.calendar() != null ? rule.quotaWindow(now).toMillis()
                    : !rule.algorithm().hasBurst() || rule.burst() == rule.limit() ? rule.window().toMillis()
                    : Ledger.ceilDiv(rule.burst() * rule.window().toMillis(), rule.limit());
            expected.add("\"" + rule.name() + "\";q=" + rule.capacity() + ";w=" + Ledger.ceilDiv(quotaMillis, 1000));
        }
        return expected;
    }

    /**
     * Asks with new callers until the response announces every policy item expected (30 s at
     * most), expected as of each probe: a calendar period's length changes when a period ends.
     */
    private void awaitPolicy(String prefix, java.util.function.Supplier<List<String>> expecting) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<String> expected = expecting.get();
            String probe = "probe-" + workload.seed() + "-" + probes++;
            String target = prefix.endsWith("=") ? prefix + probe : prefix + probe + "?caller=" + probe;
            HttpCall.Seen seen = HttpCall.get(app.port(), "127.0.0.1", target, Map.of("X-Caller", probe),
                    HttpCall.Client.READS);
            List<String> items = List.of(String.valueOf(seen.headers().get("ratelimit-policy")).split(", "));
            if (items.containsAll(expected)) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the settings were not applied within 30 s: expected policy "
                        + expected + " at " + target + ", got " + seen.status() + " " + seen.headers());
            }
            pause(20);
        }
    }

    private static void awaitFinished(HttpApp.Trace trace, String id) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (trace.finished < 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("request " + id + " did not leave the filter chain within 30 s");
            }
            pause(1);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
