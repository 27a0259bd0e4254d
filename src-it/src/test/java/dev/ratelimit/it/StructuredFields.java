package dev.ratelimit.it;

import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.ParseException;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rate-limit Lists of draft-11 (String items with Integer or String parameters), read with
 * an independent RFC 8941 parser (org.greenbytes.http:structured-fields) as a client would, not
 * with the filter's code. Anything else is an error, so a malformed header fails the test.
 */
final class StructuredFields {

    record Item(String value, Map<String, Object> params) {
        /** An Integer parameter. */
        long param(String key) {
            Object v = params.get(key);
            if (!(v instanceof Long number)) {
                throw new AssertionError("Integer parameter '" + key + "' missing from " + this);
            }
            return number;
        }
    }

    private StructuredFields() {
    }

    static List<Item> parseList(String text) {
        List<ListElement<?>> parsed;
        try {
            parsed = Parser.parseList(text).get();
        } catch (ParseException e) {
            throw new AssertionError("not a Structured Field List: " + text + " (" + e.getMessage() + ")", e);
        }
        List<Item> items = new ArrayList<>();
        for (ListElement<?> element : parsed) {
            if (!(element instanceof StringItem name)) {
                throw new AssertionError("not a String item: " + element.serialize() + " in " + text);
            }
            Map<String, Object> params = new LinkedHashMap<>();
            for (Map.Entry<String, org.greenbytes.http.sfv.Item<?>> param : name.getParams().entrySet()) {
                org.greenbytes.http.sfv.Item<?> value = param.getValue();
                if (value instanceof IntegerItem integer) {
                    params.put(param.getKey(), integer.get());
                } else if (value instanceof StringItem string) {
                    params.put(param.getKey(), string.get());
                } else {
                    throw new AssertionError("parameter " + param.getKey() + " is neither Integer nor String in " + text);
                }
            }
            items.add(new Item(name.get(), params));
        }
        return items;
    }
}
