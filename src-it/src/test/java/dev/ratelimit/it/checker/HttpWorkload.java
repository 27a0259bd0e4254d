package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A random workload for the filter over HTTP, from a seed: two to four route rules, which the
 * filter applies by their paths, and four method rules, which the {@code @RateLimited} methods of
 * {@link HttpMethods} name (the five windowed algorithms; limits, windows, bursts, a cost per
 * request, count-rejected, {@code count-when} or {@code refund-when}), each with two plans read
 * from an {@code X-Plan} header, three callers, the deny cache on or off, pipelines on or off,
 * and a list of steps: requests over random subsets of the route rules (through paths each rule
 * matches), from the trusted proxy's address or another, with or without a plan header, for
 * responses of every kind (statuses, slow, async, thrown, a long body the client hangs up on, a
 * client that resets early or gives up); rule edits applied by {@code ratelimit.refresh}; the
 * application's {@code LimitProvider} changing its answers (limits, none, one below the cost, a
 * failure). A route rule counts per the {@code X-Caller} header or per the {@code caller} query
 * parameter, or (a third of them) per client address ({@code ip}) or per principal else address
 * ({@code principal-or-ip}), a method rule per the method's {@code caller} parameter. Requests send
 * {@code X-Forwarded-For} and {@code Forwarded} headers, honest and spoofed, and an authenticated
 * principal now and then ({@link HttpForwarding}); the settings name one header, trust a run's
 * proxies and count IPv6 clients per network of a drawn prefix.
 *
 * <p>Adversarial about keys: the query's {@code caller} is now and then another caller's or left
 * out, so a method whose caller is its path parameter must not be keyed by it, and a method with a
 * default receives that. About one request in four calls an annotated method (one through a
 * sub-resource locator, one through the CDI bean), half of them under route rules of the filter
 * too: both layers decide one request, and a refusal by either gives back what the other took.
 *
 * <p>The filter runs on the app's clock ({@code ratelimit.clock=client}, the servlet context's
 * {@code InstantSource}): the wall clock's pace from a start the seed draws, so a seed runs at
 * the same date on any day ({@link #clockStart}); half the runs with a calendar window start a
 * few seconds before one of its interesting periods ends (a DST day, a February's end), the
 * others anywhere in 2026 and 2027. A decision's time is known only as an interval of a few ms. Windows are
 * therefore long (an hour or more) and limits at most 20: a run of seconds never sees a bucket
 * refill one unit nor a log entry leave its window, and an aligned window's start is waited out
 * (or, if a decision still straddles one, the history says so). Concurrency rules are left to
 * the API targets: requests here are one at a time.
 *
 * @param seed        the seed
 * @param denyCache   whether the deny cache is on
 * @param pipelines   whether calls to Valkey are pipelined (8) or each on its own connection (0)
 * @param rules       the route rules
 * @param methodRules the method rules, {@code m0} to {@code m3}
 * @param keys        the callers
 * @param avoided     the open defects steered clear of
 * @param network     the forwarding settings and the peers' addresses
 * @param steps       what to do
 * @param clockStart  the filter's time, epoch ms, when the run begins
 */
record HttpWorkload(long seed, boolean denyCache, boolean pipelines, List<Spec> rules, List<Spec> methodRules,
                    List<String> keys, Set<Known> avoided, HttpForwarding.Network network, List<Step> steps,
                    long clockStart) {

    private static final long[] LIMITS = {1, 2, 3, 5, 10, 20};
    static final long[] WINDOWS = {3_600_000, 7_200_000, 86_400_000};
    private static final Algorithm[] ALGORITHMS = {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG,
        Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.TOKEN_BUCKET, Algorithm.GCRA};
    private static final int[] STATUSES = {200, 200, 200, 200, 201, 401, 403, 404, 500, 503};
    /** Plans the header may name: two listed, one not. */
    static final String[] PLANS = {"basic", "pro", "gold"};

    /**
     * One rule as configured.
     *
     * @param rule    the rule's own settings (edited during the run)
     * @param cost    units each request takes
     * @param outcome {@code count-when} or {@code refund-when}, or null
     * @param statuses their statuses, e.g. {@code status:401,403} or {@code status:5xx}
     * @param basic   the plan with a lower limit (and a window of its own)
     * @param pro     the plan with a higher one
     * @param byParam whether the caller is read from the {@code caller} parameter (else the X-Caller header)
     * @param address {@code ip} or {@code principal-or-ip} when the rule counts per client address
     *                (or principal) instead of per caller, else null; a route rule's only
     */
    record Spec(Rule rule, long cost, String outcome, String statuses, Rule basic, Rule pro, boolean byParam,
                String address) {

        /** The rule a plan named by a believed header holds its callers to. */
        Rule plan(String name) {
            return switch (name) {
                case "basic" -> basic;
                case "pro" -> pro;
                default -> rule;
            };
        }

        /** Whether a response of this status gives the request's units back. */
        boolean givesBack(int status) {
            if (outcome == null) {
                return false;
            }
            boolean listed = false;
            for (String s : statuses.substring("status:".length()).split(",")) {
                listed |= s.endsWith("xx") ? status / 100 == s.charAt(0) - '0' : status == Integer.parseInt(s);
            }
            return outcome.equals("count-when") != listed;
        }

        Spec withRule(Rule edited) {
            return new Spec(edited, cost, outcome, statuses, basic, pro, byParam, address);
        }
    }

    /** A step. */
    sealed interface Step {
    }

    /**
     * A request.
     *
     * @param mask     the route rules whose paths it takes (bit i: rule i), 0 for none
     * @param method   the annotated method it calls ({@link HttpMethods#METHODS}), or -1 for the plain servlet
     * @param key      the caller's index: the X-Caller header, and the path's caller
     * @param queryKey the index of the caller the query's {@code caller} names, or -1 when it has none
     * @param from     "trusted" (from the trusted proxy's address) or "untrusted" (from another)
     * @param plan     the X-Plan header, or null
     * @param status   the status the application is asked for
     * @param app      plain, slow, async, throw or stream
     * @param client   what the client does
     * @param user     whether the request is authenticated (an {@code X-User} header naming the caller,
     *                 which the app makes its principal)
     * @param forwarding the forwarding headers sent
     * @param pre      what a filter of the application's before the limiter does to the response
     *                 ({@link HttpApp}'s {@code X-Pre}: {@link #PRES}), or null for nothing
     */
    record Request(int mask, int method, int key, int queryKey, String from, String plan, int status, String app,
                   HttpCall.Client client, boolean user, List<HttpForwarding.Header> forwarding, String pre)
            implements Step {
    }

    /**
     * What an earlier filter may do to the response, which the limiter's 429 must not carry:
     * fields of its own content, a locale, trailers, a transfer coding, a buffer smaller than the
     * problem. (Not bytes left in the buffer by its output stream: the application answers through
     * its writer, which that would deny it; {@code RefusalBodyTest} has that case.)
     */
    static final String[] PRES = {"own-content", "locale", "trailers", "chunked", "small-buffer"};

    /**
     * A rule's own limit, window and burst edited in the settings, applied by a refresh; a fixed
     * window's calendar window ({@link Calendars#text}), or null for a rolling one.
     *
     * @param method whether the rule is a method rule ({@code rule} indexes those), else a route rule
     */
    record Edit(int rule, boolean method, long limit, long windowMs, long burst, String calendar) implements Step {
    }

    /** The provider's answer for a caller from now on: a limit, none (0) or a failure (-1). */
    record Answer(int key, long answer) implements Step {
    }

    /**
     * A seed's workload.
     *
     * @param seed    the seed
     * @param steps   how many steps
     * @param avoided the open defects to steer clear of
     * @return the workload
     */
    static HttpWorkload generate(long seed, int steps, Set<Known> avoided) {
        Random random = new Random(seed * 31 + 7);
        int count = 2 + random.nextInt(MAX_RULES - 1);
        List<Spec> rules = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            rules.add(spec(random, "r" + i));
        }
        // Calendar windows from a stream of their own (every other draw of a seed stays): half the
        // fixed windows are a calendar period, their pro plan one time in two, and their edits too.
        Random calendars = new Random(seed * 233 + 19);
        for (int i = 0; i < count; i++) {
            Spec spec = rules.get(i);
            if (spec.rule().algorithm() == Algorithm.FIXED_WINDOW && calendars.nextBoolean()) {
                Rule pro = calendars.nextBoolean() ? spec.pro().toBuilder().calendar(Calendars.draw(calendars)).build() : spec.pro();
                rules.set(i, new Spec(spec.rule().toBuilder().calendar(Calendars.draw(calendars)).build(), spec.cost(), spec.outcome(),
                        spec.statuses(), spec.basic(), pro, spec.byParam(), null));
            }
        }
        // The method rules and what a request sends as the query's caller, from streams of their own.
        Random methods = new Random(seed * 977 + 3);
        List<Spec> methodRules = new ArrayList<>();
        for (int i = 0; i < MAX_RULES; i++) {
            Spec spec = spec(methods, "m" + i);
            methodRules.add(new Spec(spec.rule(), spec.cost(), spec.outcome(), spec.statuses(), spec.basic(), spec.pro(),
                    true, null));
        }
        // Client addresses, from a stream of their own: the forwarding settings, a third of the
        // route rules keyed by the client's address (or its principal), each request's headers.
        Random addresses = new Random(seed * 389 + 29);
        // What an earlier filter does to a response, from a stream of its own: one request in three.
        Random pres = new Random(seed * 541 + 13);
        HttpForwarding.Network network = HttpForwarding.network(addresses, seed);
        for (int i = 0; i < count; i++) {
            if (addresses.nextInt(3) == 0) {
                Spec spec = rules.get(i);
                rules.set(i, new Spec(spec.rule(), spec.cost(), spec.outcome(), spec.statuses(), spec.basic(),
                        spec.pro(), false, addresses.nextBoolean() ? "ip" : "principal-or-ip"));
            }
        }
        List<String> keys = List.of("s" + seed + "-a", "s" + seed + "-b", "s" + seed + "-c");
        List<Step> list = new ArrayList<>(steps);
        while (list.size() < steps) {
            int roll = random.nextInt(100);
            if (roll < 2) {
                boolean method = methods.nextInt(3) == 0;
                int index = method ? methods.nextInt(MAX_RULES) : random.nextInt(count);
                Spec spec = (method ? methodRules : rules).get(index);
                Rule edited = edit(random, spec);
                String calendar = edited.algorithm() == Algorithm.FIXED_WINDOW && calendars.nextBoolean()
                        ? Calendars.text(Calendars.draw(calendars)) : null;
                list.add(new Edit(index, method, edited.limit(), edited.window().toMillis(), edited.burst(), calendar));
            } else if (roll < 6) {
                list.add(new Answer(random.nextInt(keys.size()), answer(random)));
            } else {
                list.add(request(random, methods, addresses, pres, network, count));
            }
        }
        return new HttpWorkload(seed, random.nextInt(3) > 0, random.nextBoolean(), List.copyOf(rules),
                List.copyOf(methodRules), keys, Set.copyOf(avoided), network, List.copyOf(list),
                clockStart(new Random(seed * 613 + 41), rules));
    }

    /** The first day a run's clock may start on; runs start within two years of it. */
    private static final long EARLIEST = java.time.Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

    /**
     * The filter's time when the run begins, from a stream of its own (every other draw of a seed
     * stays): for half the runs whose route rules have a calendar window, 1 to 5 s before an
     * interesting period of one of them ends (past the 2 s a request waits for an aligned start,
     * and within a run's few seconds, so that its steps cross it); else anywhere in two years.
     */
    private static long clockStart(Random random, List<Spec> rules) {
        List<dev.ratelimit.CalendarWindow> calendars = new ArrayList<>();
        for (Spec spec : rules) {
            for (Rule rule : List.of(spec.rule(), spec.pro())) {
                if (rule.calendar() != null) {
                    calendars.add(rule.calendar());
                }
            }
        }
        if (!calendars.isEmpty() && random.nextBoolean()) {
            return Calendars.interestingEnd(random, calendars.get(random.nextInt(calendars.size())))
                    - 1_000 - random.nextInt(4_000);
        }
        return EARLIEST + (long) (random.nextDouble() * 2 * 365 * 86_400_000L);
    }

    private static Spec spec(Random random, String name) {
        Algorithm algorithm = ALGORITHMS[random.nextInt(ALGORITHMS.length)];
        long limit = pick(random, LIMITS);
        long window = pick(random, WINDOWS);
        long cost = random.nextInt(4) == 0 ? Math.min(limit, 2 + random.nextInt(2)) : 1;
        String outcome = null;
        String statuses = null;
        switch (random.nextInt(4)) {
            case 0 -> {
                outcome = "count-when";
                statuses = random.nextBoolean() ? "status:401,403" : "status:4xx";
            }
            case 1 -> {
                outcome = "refund-when";
                statuses = "status:5xx";
            }
            default -> {
                // counts every response
            }
        }
        boolean countRejected = !"count-when".equals(outcome) && random.nextInt(4) == 0;
        Rule rule = Rule.of(name, algorithm, limit, Duration.ofMillis(window)).withCountRejected(countRejected);
        if (algorithm.hasBurst() && random.nextBoolean()) {
            rule = rule.toBuilder().burst(Math.max(cost, 1 + random.nextInt((int) (2 * limit)))).build();
        }
        long basicLimit = Math.max(cost, limit / 2);
        Rule basic = Rule.of(name, algorithm, basicLimit, Duration.ofMillis(WINDOWS[0])).withCountRejected(countRejected);
        long proLimit = Math.max(cost, Math.min(20, 2 * limit + 1));
        Rule pro = Rule.of(name, algorithm, proLimit, Duration.ofMillis(pick(random, WINDOWS)))
                .withCountRejected(countRejected);
        if (algorithm.hasBurst()) {
            basic = basic.toBuilder().burst(basicLimit).build();
            pro = pro.toBuilder().burst(proLimit).build();
        }
        return new Spec(rule, cost, outcome, statuses, basic, pro, random.nextInt(3) == 0, null);
    }

    /** New limit, window and burst, never below the cost (a refresh would refuse them whole). */
    private static Rule edit(Random random, Spec spec) {
        Rule old = spec.rule();
        long limit = Math.max(spec.cost(), pick(random, LIMITS));
        Rule rule = Rule.of(old.name(), old.algorithm(), limit, Duration.ofMillis(pick(random, WINDOWS)))
                .withCountRejected(old.countRejected());
        if (old.algorithm().hasBurst()) {
            rule = rule.toBuilder().burst(Math.max(spec.cost(), 1 + random.nextInt((int) (2 * limit)))).build();
        }
        return rule;
    }

    private static long answer(Random random) {
        return switch (random.nextInt(6)) {
            case 0 -> HttpProvider.NONE;
            case 1 -> HttpProvider.THROWS;
            case 2 -> 1; // below a cost of 2 or 3: the configured limit must apply
            default -> pick(random, LIMITS);
        };
    }

    private static Step request(Random random, Random methods, Random addresses, Random pres,
                                HttpForwarding.Network network, int count) {
        int mask = 0;
        while (mask == 0) {
            mask = random.nextInt(1 << count);
        }
        String from = random.nextInt(3) == 0 ? "untrusted" : "trusted";
        String plan = random.nextInt(5) < 2 ? PLANS[random.nextInt(PLANS.length)] : null;
        int status = STATUSES[random.nextInt(STATUSES.length)];
        String app = "plain";
        HttpCall.Client client = HttpCall.Client.READS;
        int kind = random.nextInt(40);
        if (kind < 3) {
            app = "slow";
        } else if (kind < 7) {
            app = "async";
        } else if (kind < 9) {
            app = "throw";
        } else if (kind < 13) {
            app = "stream";
            client = HttpCall.Client.HANGS_UP_MID_BODY;
        } else if (kind < 14) {
            app = "slow";
            client = HttpCall.Client.RESETS_EARLY;
        } else if (kind < 15) {
            app = "slow";
            client = HttpCall.Client.GIVES_UP;
        }
        int key = random.nextInt(3);
        // Mostly the caller's own; now and then another caller's, or none: named like the method's key.
        int spoof = methods.nextInt(6);
        int queryKey = spoof == 0 ? -1 : spoof == 1 ? (key + 1 + methods.nextInt(2)) % 3 : key;
        boolean user = addresses.nextInt(3) == 0;
        List<HttpForwarding.Header> forwarding = HttpForwarding.headers(addresses, network);
        String pre = pres.nextInt(3) == 0 ? PRES[pres.nextInt(PRES.length)] : null;
        if (random.nextInt(4) == 0) {
            // An annotated method: a plain answer, read whole, under the filter's route rules of the mask or none.
            int method = HttpMethods.draw(random);
            boolean alone = random.nextBoolean();
            return new Request(alone ? 0 : mask, method, key, queryKey, from, plan, status, "plain",
                    HttpCall.Client.READS, user, forwarding, pre);
        }
        return new Request(mask, -1, key, queryKey, from, plan, status, app, client, user, forwarding, pre);
    }

    private static long pick(Random random, long[] values) {
        return values[random.nextInt(values.length)];
    }

    /** Most rules a workload has: every run configures this many, the ones it does not use on a path never asked. */
    static final int MAX_RULES = 4;
}
