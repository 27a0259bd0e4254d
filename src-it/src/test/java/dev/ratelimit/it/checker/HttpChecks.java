package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The promises only a request over HTTP can break, checked on what the client saw
 * ({@link Event.Response}) beside the rule-by-rule invariants every target gets:
 * <ul>
 *   <li>a response is the application's own answer or the filter's 429: nothing the filter does
 *       (a provider's answer, a plan) turns a request into a 500;</li>
 *   <li>the status says what was decided: 429 exactly when an enforcing rule rejected;</li>
 *   <li>a 429 carries a {@code Retry-After} of at least one second, and it never precedes the end
 *       of the {@code t} the {@code RateLimit} field gives a rule that rejected (a client that
 *       waits what it is told finds the quota the field announced);</li>
 *   <li>a 429 is whole and its own, whatever a filter before the limiter did to the response:
 *       sent with its length (chunked only where that filter asked for trailers, and then with
 *       none of them), an {@code application/problem+json} body of the quota-exceeded type whose
 *       wait is its {@code Retry-After}, and none of the fields that filter set about content of
 *       its own.</li>
 * </ul>
 */
final class HttpChecks {

    /** One item of the {@code RateLimit} field: {@code "name";r=…;t=…}. */
    private static final Pattern ITEM = Pattern.compile("\"([^\"]+)\";r=(\\d+);t=(\\d+)");
    /** The name of an item of either field. */
    private static final Pattern NAME = Pattern.compile("\"([^\"]+)\";");

    private HttpChecks() {
    }

    /**
     * The violations of one request.
     *
     * @param call     what was sent
     * @param outcome  the decisions the filter reported ({@link Event.Decided}), or its failure
     * @param response what the client saw
     * @param avoided  the open defects the run steers clear of (names)
     * @return the violations, in order
     */
    static List<Violation> check(Event.Call call, Event outcome, Event.Response response, List<?> avoided) {
        List<Violation> found = new ArrayList<>();
        Claim first = call.claims().get(0);
        String rule = first.rule().name();
        String key = first.key();
        int status = response.status();
        if (status < 0) {
            return found; // the client left before the head
        }
        if (status != 429 && response.expected() >= 0 && status != response.expected()) {
            found.add(new Violation("http: a response is the application's answer or the filter's 429",
                    "the application was asked for " + response.expected() + " and the client got " + status
                            + (outcome instanceof Event.Failed failed ? " (the filter decided nothing: " + failed.error() + ")"
                            : ""), call.op(), Invariants.STORE, rule, key, call.at(), call.latest()));
        }
        if (outcome instanceof Event.Decided decided) {
            boolean rejected = !decided.decisions().allowed();
            if (rejected != (status == 429)) {
                found.add(new Violation("http: the status says what was decided",
                        "the filter's rules " + (rejected ? "rejected" : "allowed") + " the request, the client got "
                                + status, call.op(), Invariants.STORE, rule, key, call.at(), call.latest()));
            }
        }
        if (status == 429) {
            retryAfter(call, outcome, response, avoided, found);
            whole(call, response, found);
        }
        fields(call, response, found);
        return found;
    }

    /**
     * The fields name every rule decided for the request, by every layer, once each, in the order
     * the request met them: both {@code RateLimit} and {@code RateLimit-Policy}.
     */
    private static void fields(Event.Call call, Event.Response response, List<Violation> found) {
        if (response.decided() == null) {
            return;
        }
        for (String field : new String[] {response.rateLimit(), response.policy()}) {
            List<String> named = new ArrayList<>();
            Matcher m = NAME.matcher(field == null ? "" : field);
            while (m.find()) {
                named.add(m.group(1));
            }
            if (!named.equals(response.decided())) {
                Claim first = call.claims().get(0);
                found.add(new Violation("http: the fields name every rule decided for the request, once, in order",
                        "decided " + response.decided() + ", the fields name " + named + ": RateLimit " + response.rateLimit()
                                + ", RateLimit-Policy " + response.policy(), call.op(), Invariants.STORE,
                        first.rule().name(), first.key(), call.at(), call.latest()));
            }
        }
    }

    /** Fields about a content of its own that an earlier filter may set, and a 429 must not carry. */
    private static final List<String> OTHER_CONTENT = List.of("content-encoding", "content-range",
            "content-disposition", "content-language", "etag", "last-modified");

    private static void whole(Event.Call call, Event.Response response, List<Violation> found) {
        Event.Answer answer = response.answer();
        if (answer == null) {
            return; // not read whole
        }
        List<String> wrong = new ArrayList<>();
        boolean chunked = answer.framing().equals("chunked");
        if (!answer.framing().equals("length") && !(chunked && "trailers".equals(answer.pre()))) {
            wrong.add("framed by " + answer.framing());
        }
        if (chunked && answer.headers().containsKey("content-length")) {
            wrong.add("chunked with a Content-Length of " + answer.headers().get("content-length"));
        }
        if (!answer.trailers().isEmpty()) {
            wrong.add("trailers " + answer.trailers().replace("\r\n", "; "));
        }
        for (String field : OTHER_CONTENT) {
            // An annotated method's refusal keeps the encoding: a filter after the limiter may apply it.
            boolean kept = field.equals("content-encoding") && response.how().startsWith("method");
            if (answer.headers().containsKey(field) && !kept) {
                wrong.add(field + ": " + answer.headers().get(field));
            }
        }
        String type = String.valueOf(answer.headers().get("content-type"));
        if (!type.startsWith("application/problem+json")) {
            wrong.add("Content-Type " + type);
        }
        if (!answer.body().startsWith("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                || !answer.body().contains("\"status\":429") || !answer.body().endsWith("}")) {
            wrong.add("body " + answer.body());
        }
        // The problem's wait is Retry-After's, in its own member and in its detail: the body of
        // this refusal, not of another rendered before it.
        String seconds = answer.headers().get("retry-after");
        if (!answer.body().endsWith(",\"retryAfter\":" + seconds + "}")
                || !answer.body().contains("; retry in " + seconds + " s.\"")) {
            wrong.add("a problem whose wait is not Retry-After's " + seconds + ": " + answer.body());
        }
        if (!wrong.isEmpty()) {
            Claim first = call.claims().get(0);
            found.add(new Violation("http: a 429 is whole and its own, whatever a filter before the limiter did",
                    (answer.pre() == null ? "no earlier filter" : "an earlier filter's " + answer.pre()) + ": "
                            + String.join(", ", wrong), call.op(), Invariants.STORE, first.rule().name(), first.key(),
                    call.at(), call.latest()));
        }
    }

    private static void retryAfter(Event.Call call, Event outcome, Event.Response response, List<?> avoided,
                                   List<Violation> found) {
        Claim first = call.claims().get(0);
        long seconds;
        try {
            seconds = Long.parseLong(String.valueOf(response.retryAfter()));
        } catch (NumberFormatException e) {
            seconds = 0;
        }
        if (seconds < 1) {
            found.add(new Violation("http: a 429 says when to retry", "Retry-After is " + response.retryAfter(),
                    call.op(), Invariants.STORE, first.rule().name(), first.key(), call.at(), call.latest()));
            return;
        }
        if (!(outcome instanceof Event.Decided decided) || response.rateLimit() == null) {
            return;
        }
        Map<String, Long> resets = new HashMap<>();
        Matcher m = ITEM.matcher(response.rateLimit());
        while (m.find()) {
            resets.put(m.group(1), Long.parseLong(m.group(3)));
        }
        for (int i = 0; i < call.claims().size(); i++) {
            Claim claim = call.claims().get(i);
            Decision decision = decided.decisions().all().get(i);
            Long reset = resets.get(claim.rule().name());
            if (decision.allowed() || claim.rule().shadow() || reset == null) {
                continue;
            }
            if (seconds < reset) {
                found.add(new Violation(claim.rule().algorithm().id()
                        + ": a 429's Retry-After never precedes the end of the RateLimit field's t",
                        "rejected with Retry-After " + seconds + " s while the RateLimit field gives t=" + reset
                                + " s for this rule: " + response.rateLimit(), call.op(), Invariants.STORE,
                        claim.rule().name(), claim.key(), call.at(), call.latest() + seconds * 1000));
            }
        }
    }
}
