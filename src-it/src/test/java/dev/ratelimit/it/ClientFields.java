package dev.ratelimit.it;

import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.json.JSONObject;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads a response's rate-limit fields and problem body as a client would: with an independent
 * Structured Fields parser (RFC 8941) and a JSON parser, never with the filter's own code. Each
 * method fails the test on a field that does not parse or lacks a parameter of the draft's type.
 */
final class ClientFields {

    private ClientFields() {
    }

    /** One rule as the fields announce it. */
    record Announced(String name, long q, Long w, String qu, long r, long t) {
    }

    /**
     * Reads {@code RateLimit-Policy} and {@code RateLimit} (draft-11): Lists of String items,
     * Integer {@code q}, {@code w}, {@code r}, {@code t}, String {@code qu}, in the same order.
     */
    static List<Announced> draft11(HttpResponse<?> response) {
        List<ListElement<?>> policy = list(response, "RateLimit-Policy");
        List<ListElement<?>> state = list(response, "RateLimit");
        assertThat(state).as("one RateLimit item per policy").hasSameSizeAs(policy);
        List<Announced> rules = new ArrayList<>();
        for (int i = 0; i < policy.size(); i++) {
            String name = string(policy.get(i));
            assertThat(string(state.get(i))).as("the same policies in the same order").isEqualTo(name);
            long q = integer(policy.get(i), "q");
            Long w = policy.get(i).getParams().containsKey("w") ? integer(policy.get(i), "w") : null;
            String qu = null;
            if (policy.get(i).getParams().containsKey("qu")) {
                Item<?> unit = policy.get(i).getParams().get("qu");
                assertThat(unit).as("qu of %s", name).isInstanceOf(StringItem.class);
                qu = ((StringItem) unit).get();
            }
            long r = integer(state.get(i), "r");
            long t = integer(state.get(i), "t");
            assertThat(q).as("q of %s", name).isNotNegative();
            assertThat(r).as("r of %s", name).isBetween(0L, q);
            assertThat(t).as("t of %s", name).isNotNegative();
            if (w != null) {
                assertThat(w).as("w of %s", name).isPositive();
            }
            rules.add(new Announced(name, q, w, qu, r, t));
        }
        return rules;
    }

    /** The -03 fields. */
    record Draft03(long expiringLimit, List<long[]> policies, long remaining, long reset) {
    }

    /**
     * Reads draft-03's {@code RateLimit-Limit} (a List: a bare Integer, then Integer items with an
     * Integer {@code w}), {@code RateLimit-Remaining} and {@code RateLimit-Reset} (Integers).
     */
    static Draft03 draft03(HttpResponse<?> response) {
        List<ListElement<?>> limit = list(response, "RateLimit-Limit");
        assertThat(limit).as("RateLimit-Limit has its expiring limit").isNotEmpty();
        assertThat(limit.get(0)).as("the expiring limit").isInstanceOf(IntegerItem.class);
        assertThat(limit.get(0).getParams()).as("the expiring limit has no parameters").isEmpty();
        List<long[]> policies = new ArrayList<>();
        for (ListElement<?> policy : limit.subList(1, limit.size())) {
            assertThat(policy).as("a quota policy").isInstanceOf(IntegerItem.class);
            long w = integer(policy, "w");
            assertThat(w).as("w of %s", policy.serialize()).isPositive();
            policies.add(new long[] {((IntegerItem) policy).get(), w});
        }
        long remaining = item(response, "RateLimit-Remaining");
        long reset = item(response, "RateLimit-Reset");
        assertThat(remaining).isNotNegative();
        assertThat(reset).isNotNegative();
        return new Draft03(((IntegerItem) limit.get(0)).get(), policies, remaining, reset);
    }

    /** Reads an Integer field (X-RateLimit-*, RateLimit-Remaining, Retry-After as delay-seconds). */
    static long item(HttpResponse<?> response, String name) {
        Item<?> item = Parser.parseItem(header(response, name));
        assertThat(item).as("%s as a Structured Field Item", name).isInstanceOf(IntegerItem.class);
        assertThat(item.getParams()).as("%s has no parameters", name).isEmpty();
        return ((IntegerItem) item).get();
    }

    /** The names of every rate-limit field the response carries, of any version. */
    static List<String> rateLimitFieldNames(HttpResponse<?> response) {
        return response.headers().map().keySet().stream()
                .filter(name -> name.toLowerCase(java.util.Locale.ROOT).startsWith("ratelimit")
                        || name.toLowerCase(java.util.Locale.ROOT).startsWith("x-ratelimit"))
                .toList();
    }

    /**
     * Reads an {@code application/problem+json} body and checks the RFC 9457 members.
     *
     * @return the body, for the caller's checks of type and violated-policies
     */
    static JSONObject problem(HttpResponse<String> response) {
        assertThat(header(response, "Content-Type")).startsWith("application/problem+json");
        JSONObject body = new JSONObject(response.body());
        assertThat(body.getInt("status")).isEqualTo(response.statusCode());
        assertThat(body.getString("title")).isNotBlank();
        assertThat(body.getString("detail")).isNotBlank();
        return body;
    }

    /** The violated-policies of a problem body, an array of strings. */
    static List<String> violatedPolicies(JSONObject problem) {
        List<String> names = new ArrayList<>();
        problem.getJSONArray("violated-policies").forEach(name -> names.add((String) name));
        return names;
    }

    private static List<ListElement<?>> list(HttpResponse<?> response, String name) {
        return Parser.parseList(header(response, name)).get();
    }

    private static String header(HttpResponse<?> response, String name) {
        List<String> values = response.headers().allValues(name);
        assertThat(values).as("%s sent once in %s", name, response.headers().map()).hasSize(1);
        return values.get(0);
    }

    private static String string(ListElement<?> item) {
        assertThat(item).as("%s is a String item", item.serialize()).isInstanceOf(StringItem.class);
        return ((StringItem) item).get();
    }

    private static long integer(ListElement<?> item, String parameter) {
        Item<?> value = item.getParams().get(parameter);
        assertThat(value).as("parameter %s of %s, an Integer", parameter, item.serialize()).isInstanceOf(IntegerItem.class);
        return ((IntegerItem) value).get();
    }
}
