package dev.ratelimit.servlet;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.UndoableClaims;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request's account, shared by every layer that decides it: the filter, the Jakarta REST
 * filter of an annotated resource method, the CDI interceptor of a method it calls. Created by
 * the first of them and kept in a request attribute, it holds each layer's part: the claims made
 * (rule, key, cost, plan), the decisions and what was taken. With it:
 *
 * <ul>
 *   <li>a rule is decided once per request and key by the request's layers (the filter and the
 *       resource method; a CDI method's calls are actions and each counts), and a resource
 *       method that is also a CDI bean is decided once, by the Jakarta REST filter;</li>
 *   <li>a request refused by any layer gives back what the others took for it, as one call to
 *       Valkey is all or nothing (what {@code count-rejected} rules recorded stands), and exactly
 *       once;</li>
 *   <li>the rate-limit fields are the account's, naming every rule decided for the request once,
 *       in the order the request met them, whichever layer writes the response.</li>
 * </ul>
 *
 * <p>Thread-safe: an asynchronous request's layers may run on other threads.
 */
final class RequestAccount {

    /** The request attribute holding a request's account. */
    private static final String ATTRIBUTE = RequestAccount.class.getName();
    // The filter's own logger name: operators configure the filter's logging by its class.
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());
    /** Whether a failure of the limiter itself was logged: once per application, not once per request. */
    private static final AtomicBoolean UNEXPECTED_LOGGED = new AtomicBoolean();

    /** Who decided a part. */
    enum Layer {
        /** The servlet filter, by route rules, before the application runs. */
        FILTER(true),
        /** The Jakarta REST filter of an annotated resource method, before the method runs. */
        RESOURCE(true),
        /** A CDI method's interceptor, at each call: the call is an action, and each counts. */
        CALL(false);

        /** Whether it decides the request (once per rule and key) rather than a call made while serving it. */
        final boolean request;

        Layer(boolean request) {
            this.request = request;
        }
    }

    /**
     * One rule decided for the request.
     *
     * @param settings  the rule's settings
     * @param claim     its claim: the rule the caller is held to (its plan's), the key, the cost
     * @param decision  its decision, as the fields announce it
     * @param announced the rule the fields name: the caller's plan's, or the one the in-process
     *                  limiter enforced for a local decision; null for a rule not decided (its
     *                  policy let the request through unchecked), which the fields leave out
     */
    record Entry(RuleSettings settings, Claim claim, Decision decision, Rule announced) {
    }

    /** One layer's decision: its entries and what it took, settled once. */
    static final class Part {
        private final Layer layer;
        private final List<Entry> entries;
        private final Reservation reservation;
        private final ProblemDetails problem;

        private Part(Layer layer, List<Entry> entries, Reservation reservation, ProblemDetails problem) {
            this.layer = layer;
            this.entries = entries;
            this.reservation = reservation;
            this.problem = problem;
        }

        /** Whether the layer may go on: no rule refused. */
        boolean allowed() {
            return problem == null;
        }

        /** The refusal's 429 or 503, or null when allowed. */
        ProblemDetails problem() {
            return problem;
        }

        /** The rules decided by this part, in order. */
        List<RuleSettings> rules() {
            return entries.stream().map(Entry::settings).toList();
        }

        /** What the part took; settled once. */
        Reservation reservation() {
            return reservation;
        }

        /** Whether it decided anything. */
        boolean isEmpty() {
            return entries.isEmpty();
        }
    }

    /** A part that decided nothing: allowed, no fields. */
    static final Part NONE = new Part(Layer.CALL, List.of(), Reservation.kept(Decisions.of(List.of(), List.of())),
            null);

    private final FilterSettings settings;
    private final List<Part> parts = new ArrayList<>();
    /** The response the filter passed on, where later layers' fields go while it is not committed. */
    private HttpServletResponse response;
    /** The response as the filter received it. */
    private HttpServletResponse received;
    /** Whether the filter has seen the request: a later dispatch of it is not decided again. */
    private boolean filtered;
    /** The resource method the Jakarta REST filter decided and no CDI interceptor has passed yet. */
    private Object resourceMethod;
    /** The refusal thrown by a CDI call, with its part, until the request is answered. */
    private final Map<Throwable, Part> thrown = new LinkedHashMap<>();
    private boolean refused;
    /** The filter's part of a request held for its slot, until the slot's dispatch. */
    private Part delayed;
    /**
     * The request and response as the filter got them, and the response it passed on, while an
     * annotated resource method may still hold the request for its slot; null otherwise.
     */
    private HttpServletRequest holdRequest;
    private HttpServletResponse holdResponse;
    private HoldableResponse holdable;
    private RecordedBody body;
    /** The part of the resource method held for its slot, and the method, until the slot's dispatch. */
    private Part resourceHeld;
    private Object resourceHeldMethod;
    /** The fields as last computed; null once a part changed. */
    private Map<String, String> fields;

    /** The filter's clock: a calendar period's length in the fields is the one holding its now. */
    private final InstantSource clock;

    private RequestAccount(FilterSettings settings, InstantSource clock) {
        this.settings = settings;
        this.clock = clock;
    }

    /**
     * The request's account, created now unless a layer before created it.
     *
     * @param request  the request, or null for a call outside any (then a fresh account of its own)
     * @param settings the reading of the settings a new account's fields are written by
     * @param clock    the filter's clock, for the calendar periods its fields announce
     * @return the account
     */
    static RequestAccount of(HttpServletRequest request, FilterSettings settings, InstantSource clock) {
        if (request == null) {
            return new RequestAccount(settings, clock);
        }
        // A request's layers run one after the other (on one thread at a time, async or not).
        if (request.getAttribute(ATTRIBUTE) instanceof RequestAccount account) {
            return account;
        }
        RequestAccount account = new RequestAccount(settings, clock);
        request.setAttribute(ATTRIBUTE, account);
        return account;
    }

    /**
     * The request's account, if a layer created one.
     *
     * @param request the request, or null
     * @return the account, or null
     */
    static RequestAccount find(HttpServletRequest request) {
        return request != null && request.getAttribute(ATTRIBUTE) instanceof RequestAccount account ? account : null;
    }

    /**
     * Notes that the filter has seen the request.
     *
     * @return false when it had already (a forward, an async dispatch, an error page of the same request)
     */
    synchronized boolean filterSees() {
        if (filtered) {
            return false;
        }
        filtered = true;
        return true;
    }

    /**
     * Holds the response the filter passed on: fields of rules decided later (a CDI call) are
     * written on it while it is not committed; and the one it received, as an earlier filter
     * left it, which an annotated method's refusal empties of that filter's content.
     */
    synchronized void holdResponse(HttpServletResponse passed, HttpServletResponse received) {
        this.response = passed;
        this.received = received;
    }

    /**
     * Decides a layer's claims: those a layer of the request decided already (the same rule and
     * key) are left out; the rest in one all-or-nothing call. A refusal by the filter or a
     * resource method's filter, which answers it itself, gives back at once what the request's
     * other layers took; a CDI call's refusal does when it becomes the answer ({@link #answer}).
     *
     * @param now     the reading of the settings and the limiter it is decided by
     * @param matched the rules that apply, with their claims
     * @param layer   who decides
     * @param reserve whether the units are reserved whatever the rules say (a CDI call that
     *                may be given back after an exception)
     * @param mayDelay whether the request can be held for a slot to come (the filter, with room
     *                 for it): else rules with a {@code max-delay} decide as if they had none
     * @return the part; {@link Part#isEmpty()} when nothing was left to decide
     */
    Part decide(RunningFilter.Active now, List<RequestKeys.Matched> matched, Layer layer, boolean reserve,
                boolean mayDelay) {
        List<RequestKeys.Matched> undecided = new ArrayList<>(matched.size());
        synchronized (this) {
            for (RequestKeys.Matched rule : matched) {
                if (!layer.request || !decided(rule.claim())) {
                    undecided.add(rule);
                }
            }
        }
        if (undecided.isEmpty()) {
            return NONE;
        }
        // Loops, not streams: this runs for every request, the refused ones included.
        List<Claim> claims = new ArrayList<>(undecided.size());
        List<RuleSettings> settings = new ArrayList<>(undecided.size());
        for (RequestKeys.Matched rule : undecided) {
            claims.add(mayDelay ? rule.claim() : Claims.undelayed(rule.claim()));
            settings.add(rule.settings());
        }
        boolean byOutcome = reserve || OutcomeCounting.applies(settings);
        Reservation reservation;
        try {
            reservation = now.limiter().reserveAll(byOutcome ? claims : UndoableClaims.of(claims));
        } catch (RuntimeException | Error e) {
            // The limiter applies every policy itself; this is a bug, and still no 500 for it.
            if (UNEXPECTED_LOGGED.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.ERROR, "A request could not be decided; letting requests through that "
                        + "fail so (logged once)", e);
            }
            return NONE;
        }
        Decisions decisions = reservation.decisions();
        List<Entry> entries = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            entries.add(entry(undecided.get(i).settings(), claims.get(i), decisions.get(i)));
        }
        ProblemDetails problem = null;
        if (decisions.unavailable()) {
            problem = Rejections.reducedCapacity(decisions, now.settings().failureRetryAfter());
        } else if (!decisions.allowed()) {
            problem = Rejections.quotaExceeded(announced(entries), decisions.retryAfter());
        }
        Part part = new Part(layer, entries, reservation, problem);
        synchronized (this) {
            parts.add(part);
            fields = null;
        }
        if (problem != null && layer != Layer.CALL) {
            refuse(now, part);
        } else {
            writeFields();
        }
        return part;
    }

    /**
     * Whether a layer deciding the request (not a CDI call's) decided the claim's rule and key
     * already: never decided twice for one request. A scan of the few parts, rather than a set
     * kept beside them, which every request would fill and almost none would ask. Called holding
     * the account's lock.
     */
    private boolean decided(Claim claim) {
        for (Part part : parts) {
            if (part.layer.request) {
                for (Entry entry : part.entries) {
                    if (entry.claim().rule().name().equals(claim.rule().name())
                            && entry.claim().key().equals(claim.key())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Notes the filter's part of a request held for a slot to come: the dispatch at its slot
     * runs the application by it ({@link #resumeDelayed}).
     */
    synchronized void holdDelayed(Part part) {
        this.delayed = part;
    }

    /**
     * The filter's part of a request held for a slot that has come, once: the dispatch at the
     * slot runs the application; any later one only puts back the fields.
     *
     * @return the part, or null
     */
    synchronized Part resumeDelayed() {
        Part part = delayed;
        delayed = null;
        return part;
    }

    /**
     * Notes that a later layer (an annotated resource method with a {@code max-delay} rule) may
     * hold the request for its slot: the filter held it out as {@code passed}, and suspends the
     * pair it got ({@link #holdResource}).
     *
     * @param request  the request as the filter got it
     * @param response the response as the filter got it
     * @param passed   the response the filter passed on, which drops what is written once held
     * @param body     what the layers read of the request's body, for the dispatch at the slot
     */
    synchronized void mayBeHeldLater(HttpServletRequest request, HttpServletResponse response,
                                     HoldableResponse passed, RecordedBody body) {
        this.holdRequest = request;
        this.holdResponse = response;
        this.holdable = passed;
        this.body = body;
    }

    /**
     * Whether a resource method's rules may hold the request for a slot to come: the filter can
     * suspend it, it is not held already, and no layer before counted it by a rule that paces
     * requests (held for one rule's slot, it would pass later than another rule counted it, and
     * that rule's requests would pass bunched: see {@link Claims#delayingAlone}), and what was
     * read of its body can be read again at its slot.
     */
    synchronized boolean resourceMayHold() {
        if (holdable == null || holdable.held() || delayed != null || !body.replayable()) {
            return false;
        }
        for (Part part : parts) {
            for (Entry entry : part.entries) {
                if (Claims.paces(entry.claim().rule())) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Holds the request for the slot a resource method's part was admitted for: suspended as the
     * filter got it, what the application writes from now on (the method stopped) dropped, then
     * dispatched again at the slot, where {@link #resumeResource} gives the part back to the method.
     *
     * @param part    the resource method's part, allowed for a slot to come
     * @param method  the resource method
     * @param delayed the filter's held requests
     * @param delay   the time until the slot
     */
    void holdResource(Part part, Object method, DelayedRequests delayed, Duration delay) {
        HttpServletRequest request;
        HttpServletResponse response;
        synchronized (this) {
            resourceHeld = part;
            resourceHeldMethod = method;
            holdable.hold();
            request = body.replaying(holdRequest);
            response = holdResponse;
        }
        delayed.hold(request, response, delay, part.reservation(), this);
    }

    /**
     * The part of a resource method held for its slot that its dispatch did not give back to the
     * method (a filter before it answered the request, the request went elsewhere), once: the
     * request is over, and the part is settled by its status.
     *
     * @return the part, or null when none is held or the method ran by it
     */
    synchronized Part unresumedResource() {
        Part part = resourceHeld;
        resourceHeld = null;
        resourceHeldMethod = null;
        return part;
    }

    /**
     * The part of a resource method held for its slot, once, at the dispatch of the slot: the
     * method runs by it, not decided again.
     *
     * @param method the resource method being decided
     * @return the part, or null when this method was not held
     */
    synchronized Part resumeResource(Object method) {
        if (resourceHeld == null || !sameMethod(resourceHeldMethod, method)) {
            return null;
        }
        Part part = resourceHeld;
        resourceHeld = null;
        resourceHeldMethod = null;
        return part;
    }

    /** A decided rule as the fields announce it: a plan's rule as the caller's limit, a local decision with its own. */
    private static Entry entry(RuleSettings rule, Claim claim, Decision decision) {
        Rule announced = switch (decision.basis()) {
            case SHARED -> claim.rule();
            case LOCAL -> rule.localRule();
            default -> null;
        };
        return new Entry(rule, claim, decision, announced);
    }

    /** The entries the fields can announce: rules that were decided. */
    private List<RateLimitHeaders.Entry> announced(List<Entry> entries) {
        List<RateLimitHeaders.Entry> announced = new ArrayList<>(entries.size());
        long now = clock.millis();
        for (Entry entry : entries) {
            if (entry.announced() != null) {
                announced.add(new RateLimitHeaders.Entry(entry.announced(), entry.decision(),
                        entry.announced().quotaWindow(now), entry.settings().quotaUnit().orElse(null)));
            }
        }
        return announced;
    }

    /**
     * Notes that a CDI call's refusal is thrown: if it reaches the filter uncaught, the filter
     * answers it ({@link #answerThrown}).
     */
    synchronized void thrown(Part part, Throwable refusal) {
        thrown.put(refusal, part);
    }

    /**
     * The part whose refusal a failure of the application is, or null: the application let a CDI
     * call's refusal through to the filter.
     *
     * @param failure what the chain threw
     * @return the refused part, or null when the failure is another
     */
    synchronized Part thrownRefusal(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            Part part = thrown.get(cause);
            if (part != null) {
                return part;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    /**
     * A refusal is the request's answer (a CDI call's, mapped to a response or answered by the
     * filter): what the request's other layers took goes back.
     *
     * @param now     the reading of the settings and the limiter
     * @param refusal the refused part
     */
    void answer(RunningFilter.Active now, Part refusal) {
        HttpServletResponse before;
        synchronized (this) {
            before = received;
        }
        if (before != null && !before.isCommitted()) {
            // What a filter before the limiter wrote or said of its own content is no part of the
            // refusal, as of the filter's own 429.
            Rejections.emptyForJakartaRest(before);
        }
        refuse(now, refusal);
    }

    /**
     * Gives back, once, what every layer of the request other than the refusing one took for it,
     * but what {@code count-rejected} rules recorded (as one call gives back when one rule
     * rejects), and describes the rules given back as they are now. A CDI call that ended kept
     * its units: its work was done.
     */
    private void refuse(RunningFilter.Active now, Part refusal) {
        List<Part> others = new ArrayList<>();
        synchronized (this) {
            if (refused) {
                return;
            }
            refused = true;
            for (Part part : parts) {
                if (part != refusal && part.layer.request && part.allowed()) {
                    others.add(part);
                }
            }
        }
        for (Part part : others) {
            List<String> given;
            try {
                given = part.reservation.cancel(rule -> !rule.countRejected());
            } catch (RuntimeException e) {
                // A limiter of the application's own that throws: its units stay counted.
                continue;
            }
            if (!given.isEmpty()) {
                redescribe(now, part, given);
            }
        }
        writeFields();
    }

    /** Asks again, read-only, the rules a part gave back: the fields must say what the state is now. */
    private void redescribe(RunningFilter.Active now, Part part, List<String> given) {
        synchronized (this) {
            fields = null;
            for (int i = 0; i < part.entries.size(); i++) {
                Entry entry = part.entries.get(i);
                if (entry.announced() == null || !given.contains(entry.claim().rule().name())) {
                    continue;
                }
                Decision was = entry.decision();
                if (was.basis() == Decision.Basis.LOCAL) {
                    // The in-process limiter (which a peek does not reach) gave the units back at once,
                    // in this process: its rule holds them again, within its own quota.
                    long remaining = Math.min(entry.announced().capacity(), was.remaining() + entry.claim().cost());
                    part.entries.set(i, new Entry(entry.settings(), entry.claim(), was.toBuilder()
                            .remaining(remaining).retryAfter(Duration.ZERO).effectiveWindow(was.effectiveWindow())
                            .build(),
                            entry.announced()));
                    continue;
                }
                Decision peeked;
                try {
                    peeked = now.limiter().peek(entry.claim().rule(), entry.claim().key(), entry.claim().cost());
                } catch (RuntimeException e) {
                    // Not known: its units may be back, so it announces nothing rather than a stale count.
                    part.entries.set(i, new Entry(entry.settings(), entry.claim(), was, null));
                    continue;
                }
                // Its verdict on the request stands (it allowed); its numbers are the state's now.
                part.entries.set(i, new Entry(entry.settings(), entry.claim(), Decision.builder(was.ruleName(),
                        peeked.limit()).remaining(peeked.remaining()).effectiveWindow(peeked.effectiveWindow())
                        .resetAfter(peeked.resetAfter()).basis(was.basis()).build(), entry.announced()));
            }
        }
    }

    /**
     * The rate-limit fields of every rule decided for the request, each once, in the order the
     * request met them: a rule decided under several keys is announced by the one with the fewest
     * units left, a rule decided again under the same key (a CDI method called twice) by the latest.
     *
     * @return name to value, in order; empty when no rule was decided
     */
    synchronized Map<String, String> fields() {
        if (fields != null) {
            return fields;
        }
        Map<String, Entry> byRule = new LinkedHashMap<>();
        for (Part part : parts) {
            for (Entry entry : part.entries) {
                if (entry.announced() == null) {
                    continue;
                }
                byRule.merge(entry.claim().rule().name(), entry, (was, now) ->
                        was.claim().key().equals(now.claim().key())
                                || now.decision().remaining() < was.decision().remaining() ? now : was);
            }
        }
        fields = Collections.unmodifiableMap(RateLimitHeaders.fields(settings.headers(),
                announced(List.copyOf(byRule.values()))));
        return fields;
    }

    /** Whether the fields go on a 3xx response too ({@code ratelimit.headers.on-redirects}). */
    boolean fieldsOnRedirects() {
        return settings.headersOnRedirects();
    }

    /** Writes the fields on the response the filter passed on, while it is not committed. */
    private void writeFields() {
        HttpServletResponse held;
        synchronized (this) {
            held = response;
        }
        // Not on a 3xx unless asked for: the draft warns that a client may wait before following it.
        if (held != null && !held.isCommitted()
                && (settings.headersOnRedirects() || !RateLimitHeaders.isRedirection(held.getStatus()))) {
            fields().forEach(held::setHeader);
        }
    }

    /**
     * Notes the resource method the Jakarta REST filter decided for the request: its CDI
     * interceptor, if it has one, passes its invocation without deciding it again.
     *
     * @param method the resource method
     */
    synchronized void resourceMethodDecided(Object method) {
        this.resourceMethod = method;
    }

    /**
     * Whether a CDI call is the invocation of the resource method the Jakarta REST filter decided
     * (then it is passed once without a decision of its own).
     *
     * @param method the method called
     * @return true once for that method
     */
    synchronized boolean passesResourceMethod(Object method) {
        if (resourceMethod != null && sameMethod(resourceMethod, method)) {
            resourceMethod = null;
            return true;
        }
        return false;
    }
    /**
     * Whether two layers name the same method: Jakarta REST may name a CDI bean's method by its
     * client proxy's override (a sub-resource locator returning the bean), where the bean's
     * interceptor names the bean's own.
     */
    private static boolean sameMethod(Object one, Object other) {
        if (one.equals(other)) {
            return true;
        }
        if (!(one instanceof Method m) || !(other instanceof Method n) || !m.getName().equals(n.getName())
                || !Arrays.equals(m.getParameterTypes(), n.getParameterTypes())) {
            return false;
        }
        return m.getDeclaringClass().isAssignableFrom(n.getDeclaringClass())
                || n.getDeclaringClass().isAssignableFrom(m.getDeclaringClass());
    }
}
