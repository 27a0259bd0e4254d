package dev.ratelimit.servlet;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The body of a 429 or 503 the filter answers: an RFC 9457 problem of one of the draft's types.
 * <pre>
 * {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
 *  "title":"Too Many Requests","status":429,
 *  "detail":"The rate limit 'login' is exhausted; retry in 900 s.",
 *  "violated-policies":["api","login"],"rule":"login","retryAfter":900}
 * </pre>
 * {@code violated-policies} is the draft's extension member, the names of the policies (rules,
 * as named in {@code RateLimit-Policy}) the request violated. {@code rule} and
 * {@code retryAfter} are this filter's own members, kept beside it for clients that read them:
 * the rule the client must wait for longest and how long, as in {@code Retry-After}.
 *
 * @param type       the problem type URI
 * @param title      a short summary
 * @param status     the HTTP status
 * @param detail     this occurrence explained
 * @param violated   the violated policies, in the order of the rules
 * @param rule       the rule waited for
 * @param retryAfter seconds, as in {@code Retry-After}
 */
record ProblemDetails(String type, String title, int status, String detail, List<String> violated, String rule,
                      long retryAfter) {

    /** A problem as last rendered: its JSON text and that text's UTF-8 bytes. */
    private record Rendered(ProblemDetails problem, String json, byte[] utf8) {
    }

    /**
     * The problem rendered last. A client hammering past its limit is refused the same problem
     * (the same rules, the same wait in seconds) many times a second, and rendering it was a
     * tenth of the filter's work per refusal. One entry, replaced whole: equal problems render
     * equal text, so any thread may take it.
     */
    private static volatile Rendered last;

    /** Copies the list. */
    ProblemDetails {
        violated = List.copyOf(violated);
    }

    /**
     * The JSON text, as {@link #toJson()} renders it, of this problem or of an equal one rendered last.
     *
     * @return one JSON object
     */
    String json() {
        return rendered().json();
    }

    /**
     * The JSON text, as {@link #json()} gives it, encoded.
     *
     * @param charset what the body is written in
     * @return bytes of the caller's own (a stream may do with them what it likes)
     */
    byte[] encoded(Charset charset) {
        Rendered rendered = rendered();
        return charset.equals(StandardCharsets.UTF_8) ? rendered.utf8().clone() : rendered.json().getBytes(charset);
    }

    private Rendered rendered() {
        Rendered seen = last;
        if (seen != null && (seen.problem() == this || seen.problem().equals(this))) {
            return seen;
        }
        String json = toJson();
        Rendered now = new Rendered(this, json, json.getBytes(StandardCharsets.UTF_8));
        last = now;
        return now;
    }

    /**
     * The JSON text, every string escaped (rule names cannot hold a quote today; a body must
     * stay valid JSON whatever they may hold tomorrow).
     *
     * @return one JSON object
     */
    String toJson() {
        // The member names are JSON already; only the values are escaped.
        StringBuilder json = new StringBuilder(256).append("{\"type\":");
        string(json, type).append(",\"title\":");
        string(json, title).append(",\"status\":").append(status).append(",\"detail\":");
        string(json, detail).append(",\"violated-policies\":[");
        for (int i = 0; i < violated.size(); i++) {
            string(i == 0 ? json : json.append(','), violated.get(i));
        }
        json.append("],\"rule\":");
        string(json, rule).append(",\"retryAfter\":").append(retryAfter);
        return json.append('}').toString();
    }

    /**
     * A JSON string (RFC 8259 §7): the quote, the backslash and the control characters escaped.
     *
     * @param text any text
     * @return the quoted string
     */
    static String string(String text) {
        return string(new StringBuilder(text.length() + 2), text).toString();
    }

    private static StringBuilder string(StringBuilder out, String text) {
        out.append('"');
        int plain = 0;
        while (plain < text.length() && text.charAt(plain) >= 0x20 && text.charAt(plain) != '"'
                && text.charAt(plain) != '\\') {
            plain++;
        }
        // A 429 is answered at the rate of the clients over their limits: most texts need no
        // escape, and a whole string is copied at once where a range goes a character at a time.
        if (plain == text.length()) {
            return out.append(text).append('"');
        }
        out.append(text, 0, plain);
        for (int i = plain; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"');
    }
}
