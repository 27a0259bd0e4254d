package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.ServletResponseWrapper;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the responses the filter answers itself: 429 when a rule rejects, 503 when a
 * {@code closed} rule cannot reach Valkey. Both carry {@code Retry-After} in whole seconds,
 * rounded up, and an {@code application/problem+json} body (RFC 9457) of the problem types of
 * draft-ietf-httpapi-ratelimit-headers (§"Problem Types"), see {@link ProblemDetails}. The
 * rules they name are picked here too, from the request's decisions.
 */
final class Rejections {

    /** The draft's problem type for a request over one or more quotas. */
    static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";
    /** The draft's problem type for a request refused while capacity is reduced. */
    static final String REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

    private Rejections() {
    }

    /**
     * Answers a refused request: 429 with the account's fields (every rule decided for the
     * request), or 503 of a {@code closed} rule, which announces none (nothing was checked).
     *
     * @param problem the refusal
     * @param account the request's account
     */
    static void refuse(HttpServletResponse response, ProblemDetails problem, RequestAccount account)
            throws IOException {
        if (response.isCommitted()) {
            // An earlier filter sent its own answer already: the problem would only trail it.
            return;
        }
        Emptied emptied = empty(response);
        if (problem.status() == 429) {
            account.fields().forEach(response::setHeader);
        }
        write(response, problem, emptied);
    }

    /**
     * The 429's problem: the enforcing rules that rejected the request, and the one waited for.
     * Also what {@link MethodDecision} answers for an annotated method.
     */
    static ProblemDetails quotaExceeded(List<RateLimitHeaders.Entry> entries, Duration retryAfter) {
        String rule = rejectingRule(entries, retryAfter);
        long seconds = Math.max(1, RateLimitHeaders.seconds(retryAfter));
        List<String> violated = violated(entries);
        ProblemDetails last = lastQuotaExceeded;
        if (last != null && last.retryAfter() == seconds && last.rule().equals(rule)
                && last.violated().equals(violated)) {
            return last;
        }
        ProblemDetails problem = new ProblemDetails(QUOTA_EXCEEDED, "Too Many Requests", 429,
                "The rate limit '" + rule + "' is exhausted; retry in " + seconds + " s.", violated, rule, seconds);
        lastQuotaExceeded = problem;
        return problem;
    }

    /**
     * The 429's problem made last. A client hammering past its limit is refused the same one (the
     * same rules, the same wait in seconds) many times a second: the rest of the problem follows
     * from those three, and its text is built again only when one differs. One entry, replaced
     * whole: any thread may take it.
     */
    private static volatile ProblemDetails lastQuotaExceeded;

    /** The 503's problem: the rules whose {@code closed} policy refused the request, at least one. */
    static ProblemDetails reducedCapacity(Decisions decisions, Duration retryAfter) {
        List<String> refused = refused(decisions);
        long seconds = Math.max(1, RateLimitHeaders.seconds(retryAfter));
        String rule = refused.get(0);
        return new ProblemDetails(REDUCED_CAPACITY, "Service Unavailable", 503,
                "The rate limit '" + rule + "' cannot be checked right now; retry in " + seconds + " s.", refused, rule,
                seconds);
    }

    /**
     * Answers a request held for a slot to come that will not get it: the filter stops (the
     * application is undeployed) or the container timed the request out. 503 of the draft's
     * temporary-reduced-capacity type, with the account's fields, retry after its slot.
     *
     * @param untilSlot the time its slot was still away
     */
    static void stopping(HttpServletResponse response, Duration untilSlot, RequestAccount account) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        long seconds = Math.max(1, RateLimitHeaders.seconds(untilSlot));
        Emptied emptied = empty(response);
        account.fields().forEach(response::setHeader);
        write(response, new ProblemDetails(REDUCED_CAPACITY, "Service Unavailable", 503,
                "The request was held for a slot and the application is stopping; retry in " + seconds + " s.",
                List.of(), "", seconds), emptied);
    }

    /** The rules whose failure policy refused the request, in order: the 503's violated policies. */
    private static List<String> refused(Decisions decisions) {
        return decisions.all().stream().filter(d -> d.basis() == Decision.Basis.UNAVAILABLE && !d.allowed())
                .map(Decision::ruleName).distinct().toList();
    }

    /**
     * The enforcing rules that rejected the request, in order: the 429's violated policies. A
     * shadow rule that would have rejected is not one: it did not reject.
     */
    private static List<String> violated(List<RateLimitHeaders.Entry> entries) {
        List<String> names = new ArrayList<>(entries.size());
        for (RateLimitHeaders.Entry entry : entries) {
            if (!entry.rule().shadow() && !entry.decision().allowed() && !names.contains(entry.rule().name())) {
                names.add(entry.rule().name());
            }
        }
        return names;
    }

    /** The enforcing rule that keeps the request out longest: the one the client must wait for. */
    private static String rejectingRule(List<RateLimitHeaders.Entry> entries, Duration retryAfter) {
        String first = null;
        for (RateLimitHeaders.Entry entry : entries) {
            if (!entry.rule().shadow() && !entry.decision().allowed()) {
                if (entry.decision().retryAfter().equals(retryAfter)) {
                    return entry.rule().name();
                }
                first = first == null ? entry.rule().name() : first;
            }
        }
        // Longer than any rejecting rule's own wait: a count-rejected rule the rejection charged.
        return first != null ? first : entries.get(0).rule().name();
    }

    private static final String CONTENT_ENCODING = "Content-Encoding";
    /**
     * Fields an earlier filter may have set about content of its own, which the problem is not;
     * and its framing: a {@code Transfer-Encoding} left set would make the 429 chunked (or, on
     * Tomcat, sent with a length too).
     */
    private static final List<String> OTHER_CONTENTS = List.of(CONTENT_ENCODING, "Content-Range",
            "Content-Disposition", "Content-Language", "ETag", "Last-Modified", "Transfer-Encoding");

    /**
     * The response emptied of an earlier filter's content, and where the problem is written.
     *
     * @param out       the output stream, or null where an earlier filter took the writer
     * @param writer    that writer, or null
     * @param charset   what the body is encoded in: UTF-8, or the taken writer's
     * @param lengthSet whether an earlier filter set {@code Content-Length}
     */
    private record Emptied(OutputStream out, PrintWriter writer, Charset charset, boolean lengthSet) {
    }

    /**
     * Drops what a filter before the limiter left in the buffer, or said of it: no part of this
     * answer ({@code reset()} would drop the limiter's own fields too).
     */
    private static Emptied empty(HttpServletResponse response) throws IOException {
        response.resetBuffer();
        OutputStream out = null;
        PrintWriter writer = null;
        try {
            out = response.getOutputStream();
        } catch (IllegalStateException writerTaken) {
            // A filter before the limiter took the writer, in its charset: the answer goes through it.
            writer = response.getWriter();
        }
        boolean lengthSet = dropEarlierContent(response, writesAsIs(response));
        if (out != null) {
            // Not where the writer was taken: its charset may have come from the locale, and must
            // stay what the writer encodes in.
            dropLanguage(response);
        }
        return new Emptied(out, writer, out != null ? StandardCharsets.UTF_8 : charset(response), lengthSet);
    }

    /**
     * Empties the response of what a filter before the limiter wrote or said of its own content,
     * for an annotated method's refusal, which Jakarta REST writes on it. But its
     * {@code Content-Encoding}: Jakarta REST writes through the wrappers of the filters after the
     * limiter too, which the limiter cannot see, and one may be compressing.
     *
     * @param response the response as the filter received it, not committed
     */
    static void emptyForJakartaRest(HttpServletResponse response) {
        response.resetBuffer();
        dropEarlierContent(response, false);
        dropLanguage(response);
    }

    /**
     * Whether what is written to the response reaches the container as it is: no wrapper of an
     * earlier filter's stands in its stream's (or taken writer's) place. One that does is taken
     * for a compressing one, which encodes the answer: the {@code Content-Encoding} it set is then
     * the answer's own. (A wrapper with a stream of its own that does not encode, behind a filter
     * that set an encoding for content of its own, is the case this gets wrong: rarer than a
     * compression filter.)
     */
    private static boolean writesAsIs(ServletResponse response) {
        if (!(response instanceof ServletResponseWrapper wrapper)) {
            return true;
        }
        ServletResponse inner = wrapper.getResponse();
        while (inner instanceof ServletResponseWrapper next) {
            inner = next.getResponse();
        }
        try {
            return response.getOutputStream() == inner.getOutputStream();
        } catch (IllegalStateException | IOException writerTaken) {
            // The writer was taken: the wrapper's own, or the container's passed on.
            try {
                return response.getWriter() == inner.getWriter();
            } catch (IllegalStateException | IOException neither) {
                return false;
            }
        }
    }

    /**
     * Drops the fields a filter before the limiter set about content of its own, and its
     * trailers: for the limiter's own answer, and for an annotated method's refusal, which
     * Jakarta REST writes on the same response. Looked up before the limiter sets its own
     * fields: each lookup scans the fields set (by any case of their names), at the rate of the
     * clients over their limits; a pass over the names costs more, the container building their
     * set. Best effort: a wrapper of an earlier filter's that will not drop a field leaves it,
     * never turns the answer into a 500.
     *
     * @param asIs whether the answer is written as it is ({@link #writesAsIs}): else the
     *             {@code Content-Encoding} set is the encoding a wrapper will apply, and stays
     * @return whether that filter set {@code Content-Length}
     */
    private static boolean dropEarlierContent(HttpServletResponse response, boolean asIs) {
        try {
            for (String field : OTHER_CONTENTS) {
                if ((asIs || !field.equals(CONTENT_ENCODING)) && response.containsHeader(field)) {
                    response.setHeader(field, null);
                }
            }
            if (response.getTrailerFields() != null) {
                // Not null, which Jetty wraps in a supplier that fails when the response ends,
                // breaking its chunks: an empty set, sent as the last chunk (trailers only go in chunks).
                response.setTrailerFields(Map::of);
            }
        } catch (RuntimeException refused) {
            // A wrapper that takes no null value, or no change: what it keeps, it keeps.
        }
        // Asked, not looked for among the names: a container may keep the length apart from them
        // until it commits (Tomcat does).
        return response.containsHeader("Content-Length");
    }

    /**
     * Drops the language of a locale a filter before the limiter set, which Tomcat keeps apart
     * from the fields (Jetty's is among them, see {@link #dropEarlierContent}). Not a locale
     * equal to the JVM's default, which cannot be told from none: asking a container that takes
     * no null locale (Undertow) on every refusal would cost an exception each.
     */
    private static void dropLanguage(HttpServletResponse response) {
        if (!Locale.getDefault().equals(response.getLocale())) {
            try {
                response.setLocale(null);
            } catch (RuntimeException noneTaken) {
                // Undertow keeps its language among the fields, dropped with them.
            }
        }
    }

    private static void write(HttpServletResponse response, ProblemDetails problem, Emptied emptied)
            throws IOException {
        response.setStatus(problem.status());
        response.setHeader("Retry-After", Long.toString(problem.retryAfter()));
        response.setHeader("Cache-Control", "no-store");
        // One call: the container parses the type for its charset whichever way it is told.
        response.setContentType("application/problem+json;charset=UTF-8");
        byte[] body = problem.encoded(emptied.charset());
        // Where the container's buffer holds the body, its length is left to the container,
        // which sends headers and body in one write with it when the filter returns. Setting it
        // would complete the response on this write, a blocking one (a context switch more per
        // 429 on Jetty). A buffer too small, or a length an earlier filter set, needs it set.
        if (response.getBufferSize() < body.length || emptied.lengthSet()) {
            response.setContentLength(body.length);
        }
        if (emptied.writer() != null) {
            emptied.writer().write(problem.json());
        } else {
            emptied.out().write(body);
        }
    }

    /** The charset of a writer already taken; the container's default where it names none it knows. */
    private static Charset charset(HttpServletResponse response) {
        try {
            return Charset.forName(response.getCharacterEncoding());
        } catch (RuntimeException unknown) {
            return StandardCharsets.ISO_8859_1;
        }
    }
}
