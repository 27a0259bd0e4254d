package dev.ratelimit.servlet;

import java.util.List;
import java.util.Map;

/**
 * One version of the rate-limit header fields: what a response of a matched request carries in
 * it. Writers add field name to value and never touch the response, so several versions can be
 * sent together and the fields put back on a later dispatch.
 */
interface HeaderVersion {

    /**
     * Adds this version's fields.
     *
     * @param entries the decided rules of the request, never empty, in the order of the rules
     * @param fields  name to value, in the order they are set
     */
    void write(List<RateLimitHeaders.Entry> entries, Map<String, String> fields);
}
