package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
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
    /** The rule each "rule/key" was last recorded as held to. */
    private final Map<String, Rule> held = new HashMap<>();
    private long nextOp = 1;
    private int probes;

    HttpRunner(HttpWorkload workload, HttpApp app, History history) {
        this.workload = workload;
        this.app = app;
        this.history = history;
        this.rules = new ArrayList<>(workload.rules());
    }

    /** Applies the workload's settings, then runs every step. */
    void run() {
        for (int i = 0; i < workload.keys().size(); i++) {
            app.provider().answers.remove(key(i, false));
            app.provider().answers.remove(key(i, true));
        }
        app.settings().putAll(HttpSettings.of(rules, workload.denyCache()));
        awaitSettings();
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("denyCache", workload.denyCache());
        options.put("pipelines", workload.pipelines());
        // The filter's calls to Valkey are not seen: every claim it did not decide may have counted.
        options.put("storeEvents", false);
        options.put("clock", "wall");
        options.put("keys", workload.keys());
        options.put("steps", workload.steps().size());
        options.put("avoided", workload.avoided().stream().map(Enum::name).sorted().toList());
        long now = System.currentTimeMillis();
        history.add(new Event.Start(0, now, history.real(), workload.seed(), "HTTP", options));
        for (HttpWorkload.Spec spec : rules) {
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

    private void request(HttpWorkload.Request request) {
        AlignedWindows.await(rules);
        String id = UUID.randomUUID().toString();
        HttpApp.Trace trace = app.trace(id);
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-Check-Id", id);
        String caller = workload.keys().get(request.key());
        headers.put("X-Caller", caller);
        if (request.plan() != null) {
            headers.put("X-Plan", request.plan());
        }
        String path = request.method() < 0 ? "/s" + request.mask() + "/o"
                : HttpMethods.METHODS.get(request.method()).target(request.mask() == 0 ? "/j/"
                : "/s" + request.mask() + "/j/", caller);
        String target = path + "?caller=" + caller + "&status=" + request.status() + switch (request.app()) {
            case "slow" -> "&sleep=" + (request.client() == HttpCall.Client.READS ? 30 : 150);
            case "async" -> "&async=1&sleep=" + (request.status() % 3) * 10;
            case "throw" -> "&throw=1";
            case "stream" -> "&stream=1";
            default -> "";
        };
        long sent = System.currentTimeMillis();
        HttpCall.Seen seen = HttpCall.get(app.port(), request.from().equals("trusted") ? "127.0.0.1" : "127.0.0.2",
                target, headers, request.client());
        awaitFinished(trace, id);
        long latest = trace.reached >= 0 ? Math.min(trace.reached, trace.finished) : trace.finished;
        app.forget(id);
        int methodRules = request.method() < 0 ? 0 : HttpMethods.METHODS.get(request.method()).rules();
        // The filter decides the mask's rules; an annotated method then only those it did not.
        List<Integer> byFilter = indices(request.mask());
        List<Integer> byMethod = indices(methodRules & ~request.mask());
        Decisions filter = byFilter.isEmpty() ? null
                : record(request, byFilter, sent, latest, seen, trace, !byMethod.isEmpty());
        if (!byMethod.isEmpty() && (filter == null || filter.allowed())) {
            record(request, byMethod, sent, latest, seen, trace, false);
        }
    }

    /** The rules of a mask, by index. */
    private List<Integer> indices(int mask) {
        List<Integer> matched = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            if ((mask & 1 << i) != 0) {
                matched.add(i);
            }
        }
        return matched;
    }

    /**
     * Records one decision of the request (the filter's or the annotated method's) on its
     * rules, and the response with it unless the method's decision follows (the filter let the
     * request through to it); its settling by the response's status.
     *
     * @return the decisions read back, or null when nothing was decided
     */
    private Decisions record(HttpWorkload.Request request, List<Integer> matched, long sent, long latest,
                             HttpCall.Seen seen, HttpApp.Trace trace, boolean methodFollows) {
        // A CDI bean's call is given no HTTP request: no header key, no plan; a refused call given back.
        boolean cdi = !methodFollows && request.method() >= 0 && HttpMethods.METHODS.get(request.method()).cdi();
        if (cdi) {
            matched = matched.stream().filter(i -> rules.get(i).byParam()).toList();
            if (matched.isEmpty()) {
                return null;
            }
        }
        long op = nextOp++;
        boolean trusted = request.from().equals("trusted") && !cdi;
        List<Claim> claims = new ArrayList<>();
        boolean reserve = cdi;
        for (int i : matched) {
            HttpWorkload.Spec spec = rules.get(i);
            String key = key(request.key(), spec.byParam());
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
        if (AlignedWindows.straddles(rules, sent, latest)) {
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
        if (methodFollows && (decisions == null || decisions.allowed())) {
            if (reserve && decisions != null && decisions.allowed()) {
                settle(op, matched, claims, seen, request);
            }
            return decisions;
        }
        int expected = request.client() == HttpCall.Client.READS || request.client() == HttpCall.Client.HANGS_UP_MID_BODY
                ? (request.app().equals("throw") ? 500 : request.status()) : -1;
        history.add(new Event.Response(op, latest, history.real(), seen.status(), expected,
                seen.headers().get("ratelimit"), seen.headers().get("retry-after"),
                (request.method() < 0 ? "" : "method " + (request.mask() == 0 ? "" : "under filter ")
                        + (methodFollows ? "refused by the filter " : "") + HttpMethods.METHODS.get(request.method()).path()
                        + " ") + request.app() + " " + request.client().name().toLowerCase() + " from " + request.from()
                        + (request.plan() == null ? "" : " plan " + request.plan())));
        if (cdi && decisions != null && decisions.allowed() && request.status() >= 400) {
            List<String> names = claims.stream().map(c -> c.rule().name()).toList();
            history.add(new Event.Settled(nextOp++, System.currentTimeMillis(), history.real(), op, "refused",
                    names, names, null));
        } else if (!cdi && reserve && decisions != null && decisions.allowed()) {
            settle(op, matched, claims, seen, request);
        }
        return decisions;
    }

    /**
     * The units the rules' settings give back for the response: by the status the client saw
     * (a committed status stands, even when the client then hung up); unknown, so maybe given
     * back, when it left before the head.
     */
    private void settle(long reservation, List<Integer> matched, List<Claim> claims, HttpCall.Seen seen,
                        HttpWorkload.Request request) {
        List<String> asked = new ArrayList<>();
        for (int j = 0; j < claims.size(); j++) {
            HttpWorkload.Spec spec = rules.get(matched.get(j));
            boolean maybe = seen.status() < 0 && spec.outcome() != null;
            if (maybe || seen.status() >= 0 && spec.givesBack(seen.status())) {
                asked.add(claims.get(j).rule().name());
            }
        }
        if (asked.isEmpty()) {
            return;
        }
        long op = nextOp++;
        long at = System.currentTimeMillis();
        String error = seen.status() < 0 ? "the client left before the head (" + request.client() + "): the outcome "
                + "it was settled by is not known" : null;
        history.add(new Event.Settled(op, at, history.real(), reservation, "outcome", asked,
                error == null ? asked : null, error));
    }

    private void edit(HttpWorkload.Edit edit) {
        HttpWorkload.Spec spec = rules.get(edit.rule());
        Rule old = spec.rule();
        Rule rule = Rule.of(old.name(), old.algorithm(), edit.limit(), Duration.ofMillis(edit.windowMs()))
                .withCountRejected(old.countRejected());
        if (old.algorithm().hasBurst()) {
            rule = rule.withBurst(edit.burst());
        }
        if (edit.calendar() != null) {
            rule = rule.withCalendar(Calendars.parse(edit.calendar()));
        }
        rules.set(edit.rule(), spec.withRule(rule));
        app.settings().putAll(HttpSettings.of(rules, workload.denyCache()));
        awaitSettings();
        // Recorded per key at each key's next request (the rule it is held to changed).
    }

    /** Waits until a refresh has applied the settings: a new caller's request shows every rule as set. */
    private void awaitSettings() {
        StringBuilder expected = new StringBuilder();
        int all = (1 << rules.size()) - 1;
        for (HttpWorkload.Spec spec : rules) {
            Rule rule = spec.rule();
            // A calendar window's w is its current period's length.
            long quotaMillis = rule.calendar() != null ? rule.quotaWindow().toMillis()
                    : !rule.algorithm().hasBurst() || rule.burst() == rule.limit() ? rule.window().toMillis()
                    : Ledger.ceilDiv(rule.burst() * rule.window().toMillis(), rule.limit());
            expected.append(expected.length() == 0 ? "" : ", ").append('"').append(rule.name()).append("\";q=")
                    .append(rule.capacity()).append(";w=").append(Ledger.ceilDiv(quotaMillis, 1000));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            String probe = "probe-" + workload.seed() + "-" + probes++;
            HttpCall.Seen seen = HttpCall.get(app.port(), "127.0.0.1", "/s" + all + "/o?caller=" + probe,
                    Map.of("X-Caller", probe), HttpCall.Client.READS);
            if (expected.toString().equals(seen.headers().get("ratelimit-policy"))) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the settings were not applied within 30 s: expected policy "
                        + expected + ", got " + seen.status() + " " + seen.headers());
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
