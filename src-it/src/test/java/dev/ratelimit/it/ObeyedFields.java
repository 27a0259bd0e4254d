package dev.ratelimit.it;

import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.OuterList;
import org.greenbytes.http.sfv.ParseException;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;

import java.net.http.HttpResponse;
import java.util.OptionalLong;

/**
 * What an obeying client reads from a response: one rule's {@code r} and {@code t} from the
 * {@code RateLimit} field (draft-ietf-httpapi-ratelimit-headers-11), and {@code Retry-After}.
 *
 * <p>The field is parsed by a maintained Structured Fields parser ({@code org.greenbytes.http:
 * structured-fields}), not by splitting strings, so what is judged is what any conforming client
 * would read. A client must ignore a malformed field; a test must not, so a field that does not
 * parse, or lacks the rule's item or its parameters, fails the test with the field's text.
 *
 * @param remaining  the rule's {@code r}: units the client may still use
 * @param reset      the rule's {@code t}: whole seconds until more quota is available
 * @param retryAfter {@code Retry-After} in whole seconds, when the response has one
 */
record ObeyedFields(long remaining, long reset, OptionalLong retryAfter) {

    /**
     * Reads the fields of a response for one rule.
     *
     * @param response the response
     * @param rule     the rule's name, the String item of the field
     * @return the rule's numbers
     * @throws AssertionError if the fields are missing or malformed
     */
    static ObeyedFields of(HttpResponse<?> response, String rule) {
        String field = response.headers().firstValue("RateLimit")
                .orElseThrow(() -> new AssertionError("no RateLimit field on a " + response.statusCode() + " for " + rule));
        Item<?> item = itemOf(field, rule);
        return new ObeyedFields(integer(item, "r", field), integer(item, "t", field), retryAfter(response));
    }

    private static Item<?> itemOf(String field, String rule) {
        OuterList list;
        try {
            list = Parser.parseList(field);
        } catch (ParseException e) {
            throw new AssertionError("RateLimit is not a Structured Field List: '" + field + "' (" + e.getMessage() + ")", e);
        }
        for (ListElement<?> element : list.get()) {
            if (element instanceof StringItem name && name.get().equals(rule)) {
                return name;
            }
        }
        throw new AssertionError("RateLimit has no item for rule " + rule + ": '" + field + "'");
    }

    private static long integer(Item<?> item, String key, String field) {
        if (item.getParams().get(key) instanceof IntegerItem value) {
            return value.getAsLong();
        }
        throw new AssertionError("RateLimit item has no Integer parameter " + key + ": '" + field + "'");
    }

    /** Retry-After as delay-seconds; the filter never sends an HTTP-date. */
    private static OptionalLong retryAfter(HttpResponse<?> response) {
        return response.headers().firstValue("Retry-After").map(value -> {
            try {
                return OptionalLong.of(Long.parseLong(value.trim()));
            } catch (NumberFormatException e) {
                throw new AssertionError("Retry-After is not delay-seconds: '" + value + "'", e);
            }
        }).orElse(OptionalLong.empty());
    }
}
