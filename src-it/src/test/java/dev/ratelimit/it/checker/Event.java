package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;

import java.util.List;
import java.util.Map;

/**
 * What a history is made of: one record per thing that happened, each written as one line of
 * JSON. Every event names the operation it belongs to ({@code op}, numbered from 1 in the order
 * the workload ran them), the client clock's time ({@code at}, epoch ms: the time the limiter
 * decided on) and the real time since the run began ({@code real}, ms: only lost-lease grace
 * is measured in it).
 *
 * <p>The top-level events ({@link Call} then {@link Decided} or {@link Failed}, {@link Settled})
 * say what the caller asked and was told; {@link StoreCall} and {@link StoreRefund} say what
 * the shared store was asked beneath it and whether it answered, which is what tells a lost
 * reply (possibly counted) from a call never made. A layer that cannot see the store (the
 * filter over HTTP) simply has none, and the invariants then take every undecided claim as
 * possibly counted.
 */
sealed interface Event {

    /** The operation this event belongs to. */
    long op();

    /** The client clock when it happened, epoch ms. */
    long at();

    /** Real ms since the run began. */
    long real();

    /** The event as one JSON object. */
    Json json();

    /** The first line: what ran, with which options. */
    record Start(long op, long at, long real, long seed, String target, Map<String, Object> options) implements Event {
        @Override
        public Json json() {
            return base("start", this).with("seed", seed).with("target", target).with("options", options);
        }
    }

    /**
     * A rule as it is from now on: at the start, and at every edit. {@code policy} and
     * {@code localRule} say what decides it when the store cannot (null without a resilient
     * layer). With a {@code key}, the rule one key is held to from now on, whatever the rule
     * says for the others: a caller's plan, or the limit the application's provider gave it
     * (over HTTP); the state of that key is then read under it, as after an edit.
     */
    record RuleSet(long op, long at, long real, Rule rule, String policy, Rule localRule, String why, String key)
            implements Event {

        /** The rule for every key that has no rule of its own. */
        RuleSet(long op, long at, long real, Rule rule, String policy, Rule localRule, String why) {
            this(op, at, real, rule, policy, localRule, why, null);
        }

        @Override
        public Json json() {
            return base("rule", this).with("why", why).with("key", key).with("rule", ruleJson(rule))
                    .with("policy", policy).with("localRule", localRule == null ? null : ruleJson(localRule));
        }
    }

    /** The kinds of top-level call. */
    enum Kind {
        /** {@code acquireAll}. */
        ACQUIRE,
        /** {@code reserveAll}: settled later by a {@link Settled}, or never. */
        RESERVE,
        /** {@code peek}: one claim, nothing taken. */
        PEEK,
        /** {@code reset}: one claim's rule and key forgotten. */
        RESET
    }

    /**
     * A top-level call sent: what was asked, and of which limiter instance (several may share
     * one store; each has its own breaker, fallback and deny cache). The limiter decided at a
     * time in [{@code at}, {@code latest}]: the same instant for a call on the client clock, the
     * time the request went out and the time the filter's answer was seen for one over HTTP on
     * the wall clock. A call on the server clock is recorded as sent at {@code at}; the time of
     * its outcome (its {@link Decided} or {@link Failed}) is its latest.
     */
    record Call(long op, long at, long real, Kind kind, List<Claim> claims, int instance, long latest)
            implements Event {

        /** A call of the one instance, decided at exactly {@code at}. */
        Call(long op, long at, long real, Kind kind, List<Claim> claims) {
            this(op, at, real, kind, claims, 0, at);
        }

        /** A call of an instance, decided at exactly {@code at}. */
        Call(long op, long at, long real, Kind kind, List<Claim> claims, int instance) {
            this(op, at, real, kind, claims, instance, at);
        }

        @Override
        public Json json() {
            return base("call", this).with("kind", kind.name().toLowerCase()).with("claims", claimsJson(claims))
                    .with("instance", instance).with("latest", latest == at ? null : latest);
        }
    }

    /**
     * What an HTTP client saw of a request: the status ({@code -1} if it hung up or gave up
     * before the head), the status the application was asked to answer ({@code -1} when that
     * is not what the response must be: it threw, or the client left), the response's
     * {@code RateLimit}, {@code Retry-After} and {@code RateLimit-Policy} fields as sent (null
     * when absent), and the rules decided for the request by every layer, in the order the
     * request met them: what the fields must name, each once (null: not checked).
     */
    record Response(long op, long at, long real, int status, int expected, String rateLimit, String retryAfter,
                    String how, String policy, List<String> decided, Answer answer) implements Event {

        /** A response whose fields' names and answer are not checked. */
        Response(long op, long at, long real, int status, int expected, String rateLimit, String retryAfter,
                 String how) {
            this(op, at, real, status, expected, rateLimit, retryAfter, how, null, null, null);
        }

        @Override
        public Json json() {
            Json json = base("response", this).with("status", status).with("expected", expected)
                    .with("rateLimit", rateLimit).with("retryAfter", retryAfter).with("policy", policy)
                    .with("decided", decided).with("how", how);
            return answer == null || status != 429 ? json : json.with("pre", answer.pre())
                    .with("framing", answer.framing()).with("trailers", answer.trailers()).with("body", answer.body());
        }
    }

    /**
     * A response read whole, as sent: what a filter before the limiter did to it, its fields
     * (names lower-cased), its body (ISO-8859-1, chunks joined), how it was framed
     * ({@link HttpCall.Seen#framing()}) and its trailers.
     */
    record Answer(String pre, Map<String, String> headers, String body, String framing, String trailers) {
    }

    /**
     * A call the shared store was sent beneath a top-level call: its answer, or what it threw.
     * {@code unreadable} names the rule whose state the store refused to read (nothing was
     * written); any other error may be a lost reply, the call run or not. {@code began} is the
     * real ms the call was sent (its {@code real} is when it returned), {@code instance} the
     * limiter instance whose store it is (its breaker is the instance's own).
     */
    record StoreCall(long op, long at, long real, String kind, List<Claim> claims, Decisions answer, String error,
                     String unreadable, long began, int instance) implements Event {
        /** A call of the one instance, sent and returned at {@code real}. */
        StoreCall(long op, long at, long real, String kind, List<Claim> claims, Decisions answer, String error,
                  String unreadable) {
            this(op, at, real, kind, claims, answer, error, unreadable, real, 0);
        }

        @Override
        public Json json() {
            return base("store", this).with("kind", kind).with("claims", claimsJson(claims))
                    .with("answer", answer == null ? null : decisionsJson(answer)).with("error", error)
                    .with("unreadable", unreadable).with("began", began).with("instance", instance);
        }

        /** Whether the circuit breaker refused the call: nothing was sent. */
        boolean refused() {
            return error != null && error.contains("not attempted: the circuit breaker");
        }

        /** Whether the store answered. */
        boolean answered() {
            return error == null;
        }
    }

    /** A refund the shared store was sent (settling, or giving back within a call). */
    record StoreRefund(long op, long at, long real, long reservation, List<String> asked, List<String> given,
                       String error, int instance) implements Event {
        /** A refund of the one instance. */
        StoreRefund(long op, long at, long real, long reservation, List<String> asked, List<String> given,
                    String error) {
            this(op, at, real, reservation, asked, given, error, 0);
        }

        @Override
        public Json json() {
            return base("store-refund", this).with("reservation", reservation).with("asked", asked)
                    .with("given", given).with("error", error).with("instance", instance);
        }
    }

    /** What the caller was told: every rule's decision. */
    record Decided(long op, long at, long real, Decisions decisions) implements Event {
        @Override
        public Json json() {
            return base("decided", this).with("answer", decisionsJson(decisions));
        }
    }

    /** The top-level call threw. {@code unreadable}: as for {@link StoreCall}. */
    record Failed(long op, long at, long real, String error, String unreadable) implements Event {
        @Override
        public Json json() {
            return base("failed", this).with("error", error).with("unreadable", unreadable);
        }
    }

    /**
     * A reservation settled: {@code how} is commit, cancel, cancel-one (one rule and the leases)
     * or cancel-outcome (the rules that give back by outcome, and the leases); {@code asked} the rules
     * asked to give back (a commit asks the concurrency rules to release their leases);
     * {@code given} what the cancel returned (null for a commit, whose answer says nothing);
     * {@code error} what it threw; {@code began} the time before it was sent ({@code at} is after
     * it returned: on the server clock the store gave back somewhere between).
     */
    record Settled(long op, long at, long real, long reservation, String how, List<String> asked, List<String> given,
                   String error, long began, long actual) implements Event {
        /** A settlement whose time is one instant (the client clock). */
        Settled(long op, long at, long real, long reservation, String how, List<String> asked, List<String> given,
                String error) {
            this(op, at, real, reservation, how, asked, given, error, at, -1);
        }

        /** A settlement without a cost of its own. */
        Settled(long op, long at, long real, long reservation, String how, List<String> asked, List<String> given,
                String error, long began) {
            this(op, at, real, reservation, how, asked, given, error, began, -1);
        }

        @Override
        public Json json() {
            Json json = base("settled", this).with("reservation", reservation).with("how", how).with("asked", asked)
                    .with("given", given).with("error", error);
            if (actual >= 0) {
                json = json.with("actual", actual);
            }
            return began == at ? json : json.with("began", began);
        }
    }

    /**
     * A reservation settled by a cost known after the work, as the store's reservation did it
     * ({@code Reservation.commit(actual)} on the Valkey or in-process limiter): the rules it
     * charged whole, those whose charge was cut at the debt's bound, those that gave back
     * what the cost left unused, and those whose give-back failed after the charges; or what it
     * threw (nothing charged nor given back then: charges go first).
     */
    record StoreCharge(long op, long at, long real, long reservation, long actual, List<String> charged,
                       List<String> dropped, List<String> given, List<String> refundDropped, String error, long began,
                       int instance) implements Event {
        @Override
        public Json json() {
            return base("store-charge", this).with("reservation", reservation).with("actual", actual)
                    .with("charged", charged).with("dropped", dropped).with("given", given)
                    .with("refundDropped", refundDropped).with("error", error).with("began", began)
                    .with("instance", instance);
        }
    }

    /**
     * A fault injected, or ended: stall-begin, stall-end (on a cluster, of one node, named in
     * {@code detail}), function-flush, plant (the state of {@code rule} and {@code key}
     * replaced by a value no algorithm can read), unplant (that key deleted), restart (the
     * server stopped and started on the same port: every state may be gone), client-errors
     * (the next commands of the client throw an {@link Error}, as many as {@code detail} says),
     * failover-begin and failover-end (a Sentinel failover, from asking for it until every
     * instance's store was answered by the new primary; {@code detail} names the primaries and
     * any instance that did not reach the new one).
     */
    record Fault(long op, long at, long real, String kind, String rule, String key, String detail) implements Event {
        @Override
        public Json json() {
            return base("fault", this).with("kind", kind).with("rule", rule).with("key", key).with("detail", detail);
        }
    }

    /**
     * One command (or pipeline) a limiter instance's client sent on a connection, or a
     * connection it could not open ({@code command} "connect"): sent at real ms {@code began},
     * returned or threw at {@code real}. Recorded where the client is the checker's own
     * ({@link ErrorClient}); what the circuit breaker's promises are checked against, since
     * every call the breaker lets through sends one, and every failure it counts is one of these
     * throwing.
     */
    record Wire(long op, long at, long real, long began, int instance, String command, String error) implements Event {
        @Override
        public Json json() {
            return base("wire", this).with("began", began).with("instance", instance).with("command", command)
                    .with("error", error);
        }
    }

    /** A listener event of the resilient layer that counting needs: a refund dropped. */
    record Heard(long op, long at, long real, String rule, String event) implements Event {
        @Override
        public Json json() {
            return base("heard", this).with("rule", rule).with("event", event);
        }
    }

    /**
     * A state key's TTL as Valkey had it ({@code PTTL}: -2 for no key, -1 for none), read on the
     * server clock after a call claimed {@code rule} and {@code key}: Valkey read it at a time in
     * [{@code at}, {@code after}] (wall ms).
     */
    record Ttl(long op, long at, long real, Rule rule, String key, String stateKey, long pttl, long after)
            implements Event {
        @Override
        public Json json() {
            return base("ttl", this).with("rule", ruleJson(rule)).with("key", key).with("stateKey", stateKey)
                    .with("pttl", pttl).with("after", after);
        }
    }

    /**
     * The client clock moved forward by {@code by} ms, to {@code at}; on the server clock, the
     * runner waited (at most {@link Runner#MOST_WAIT_MILLIS}) until {@code at}.
     */
    record Clock(long op, long at, long real, long by, String why) implements Event {
        @Override
        public Json json() {
            return base("clock", this).with("by", by).with("why", why);
        }
    }

    private static Json base(String type, Event event) {
        return Json.object().with("type", type).with("op", event.op()).with("at", event.at()).with("real", event.real());
    }

    /** A rule's settings as JSON. */
    static Json ruleJson(Rule rule) {
        return Json.object().with("name", rule.name()).with("algorithm", rule.algorithm().id())
                .with("limit", rule.limit()).with("windowMs", rule.window().toMillis()).with("burst", rule.burst())
                .with("calendar", Calendars.text(rule.calendar())).with("countRejected", rule.countRejected()).with("shadow", rule.shadow())
                .with("maxDelayMs", rule.maxDelay().toMillis());
    }

    private static List<Json> claimsJson(List<Claim> claims) {
        return claims.stream().map(c -> Json.object().with("rule", c.rule().name()).with("key", c.key())
                .with("cost", c.cost())).toList();
    }

    private static Json decisionsJson(Decisions decisions) {
        return Json.object().with("allowed", decisions.allowed())
                .with("retryAfterMs", decisions.retryAfter().toMillis())
                .with("decisions", decisions.all().stream().map(Event::decisionJson).toList());
    }

    private static Json decisionJson(Decision d) {
        return Json.object().with("rule", d.ruleName()).with("allowed", d.allowed()).with("basis", d.basis().name())
                .with("limit", d.limit()).with("remaining", d.remaining())
                .with("effectiveWindowMs", d.effectiveWindow().toMillis()).with("retryAfterMs", d.retryAfter().toMillis())
                .with("resetAfterMs", d.resetAfter().toMillis()).with("delayMs", d.delay().toMillis());
    }
}
