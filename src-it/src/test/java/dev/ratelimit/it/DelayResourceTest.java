package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.it.DelayHttpTest.App;
import dev.ratelimit.it.DelayHttpTest.Container;
import dev.ratelimit.it.DelayHttpTest.Events;
import dev.ratelimit.jakarta.RateLimitExceededMapper;
import dev.ratelimit.jakarta.RateLimited;
import dev.ratelimit.jakarta.RateLimitedFeature;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Priorities;
import jakarta.annotation.Priority;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.Suspended;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code max-delay} on the rule of an annotated Jakarta REST method (Jersey on Jetty 12 and
 * Tomcat 11, the servlet filter registered as the example registers it, a real Valkey): the
 * method's request is held for its slot without a thread and the method runs at the slot,
 * whether it is synchronous, {@code @Suspended} or returns a {@code CompletionStage}; across two
 * instances a burst of twice the limit passes whole, never early; the body read before the
 * decision (a form key, an authentication filter checking a signature) is there again at the
 * slot; a request a filter refuses at its slot gives its units and permits back. Where it cannot
 * be held (a route rule counted the request already) it is refused as without the delay; an
 * undeploy answers every held request and gives its units back.
 */
@ExtendWith(ValkeyExtension.class)
class DelayResourceTest {

    /** When a resource method ran, epoch ms, in every app of this JVM. */
    private static final ConcurrentLinkedQueue<Long> RAN = new ConcurrentLinkedQueue<>();

    private final ValkeyServer valkey;

    DelayResourceTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
        RAN.clear();
    }

    /** A method rule: ten a second, a bucket of ten, held up to 1.5 s. */
    private Map<String, String> settings(String... more) {
        List<String> pairs = new ArrayList<>(List.of("ratelimit.rules", "shaped,by-user,inflight",
                "ratelimit.rule.shaped.scope", "method",
                "ratelimit.rule.shaped.key", "global",
                "ratelimit.rule.shaped.algorithm", "token-bucket",
                "ratelimit.rule.shaped.limit", "10",
                "ratelimit.rule.shaped.window", "1s",
                "ratelimit.rule.shaped.max-delay", "1500ms",
                "ratelimit.rule.by-user.scope", "method",
                "ratelimit.rule.by-user.key", "param:user",
                "ratelimit.rule.by-user.algorithm", "gcra",
                "ratelimit.rule.by-user.limit", "2",
                "ratelimit.rule.by-user.window", "2s",
                "ratelimit.rule.by-user.max-delay", "2s",
                "ratelimit.rule.inflight.scope", "method",
                "ratelimit.rule.inflight.key", "global",
                "ratelimit.rule.inflight.algorithm", "concurrency",
                "ratelimit.rule.inflight.limit", "1",
                "ratelimit.rule.inflight.permit-timeout", "120s"));
        pairs.addAll(List.of(more));
        return JettyApp.settings(valkey.url(), pairs.toArray(String[]::new));
    }

    private static App start(Container container, Map<String, String> settings, RateLimitListener listener,
                             Set<DispatcherType> mapped) throws Exception {
        return start(container, settings, listener, mapped, List.of());
    }

    private static App start(Container container, Map<String, String> settings, RateLimitListener listener,
                             Set<DispatcherType> mapped, List<DelayHttpTest.AppFilter> filters) throws Exception {
        ResourceConfig application = new ResourceConfig(RateLimitedFeature.class, RateLimitExceededMapper.class,
                Held.class, Stamp.class, Signed.class, Nonces.class);
        Map<String, HttpServlet> servlets = Map.of("/rest/*", new ServletContainer(application));
        return App.start(container, settings, listener, mapped, servlets, filters);
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void aBurstOfTwiceTheLimitRunsEachMethodAtItsSlotAcrossTwoInstancesWithoutHoldingAThread(Container container)
            throws Exception {
        Events events = new Events();
        Set<DispatcherType> all = EnumSet.allOf(DispatcherType.class);
        try (App a = start(container, settings(), events, all); App b = start(container, settings(), events, all)) {
            int idle = a.busyThreads() + b.busyThreads();
            String[] methods = {"/rest/sync", "/rest/suspended", "/rest/stage"};
            long t0 = System.currentTimeMillis();
            List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                responses.add(send((i % 2 == 0 ? a : b).uri(methods[i % 3])));
            }
            await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) >= 10, "ten requests held");
            // Once the ten admitted now are answered, the threads go back while (at least five)
            // held methods wait for their slots: a thread held per request would keep them busy.
            int[] busy = {Integer.MAX_VALUE};
            await(() -> {
                int now = a.busyThreads() + b.busyThreads() - idle;
                if (20 - RAN.size() >= 5) {
                    busy[0] = Math.min(busy[0], now);
                }
                return busy[0] <= 2 || 20 - RAN.size() < 5;
            }, "the threads back or the slots passed");
            for (CompletableFuture<HttpResponse<String>> response : responses) {
                HttpResponse<String> done = response.get();
                assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
                assertThat(done.body()).isEqualTo("ran");
                assertThat(done.headers().allValues("X-Stamp")).as("the answer of the method's run only")
                        .hasSize(1);
                assertThat(done.headers().firstValue("RateLimit").orElse("")).startsWith("\"shaped\"");
            }
            assertThat(busy[0]).as("request threads busy while five or more requests were held (%s)", container)
                    .isLessThanOrEqualTo(2);
            List<Long> ran = RAN.stream().sorted().toList();
            assertThat(ran).as("each method ran once").hasSize(20);
            for (int i = 10; i < 20; i++) {
                assertThat(ran.get(i) - t0).as("method %d ran at its slot or later, never early", i)
                        .isGreaterThanOrEqualTo((i - 9) * 100L - 1);
            }
            assertThat(events.count("shaped", RateLimitListener.Event.REJECTED)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void withTheFilterMappedForRequestsOnlyTheHeldMethodStillRunsAtItsSlot(Container container) throws Exception {
        Events events = new Events();
        try (App app = start(container, settings("ratelimit.rule.shaped.limit", "2"), events,
                EnumSet.of(DispatcherType.REQUEST))) {
            long t0 = System.currentTimeMillis();
            List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                responses.add(send(app.uri("/rest/stage")));
            }
            for (CompletableFuture<HttpResponse<String>> response : responses) {
                HttpResponse<String> done = response.get();
                assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
                assertThat(done.headers().firstValue("RateLimit")).isPresent();
            }
            List<Long> ran = RAN.stream().sorted().toList();
            assertThat(ran).hasSize(4);
            // Two a second: the third's slot half a second on, the fourth's a second.
            assertThat(ran.get(2) - t0).isGreaterThanOrEqualTo(499);
            assertThat(ran.get(3) - t0).isGreaterThanOrEqualTo(999);
            assertThat(events.count("shaped", RateLimitListener.Event.DELAYED)).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void aRequestARouteRuleCountedIsRefusedNotHeld(Container container) throws Exception {
        Events events = new Events();
        Map<String, String> withRoute = settings("ratelimit.rules", "everything,shaped,by-user,inflight",
                "ratelimit.rule.everything.key", "global",
                "ratelimit.rule.everything.limit", "1000",
                "ratelimit.rule.everything.window", "1m");
        try (App app = start(container, withRoute, events, EnumSet.allOf(DispatcherType.class))) {
            int ok = 0;
            int refused = 0;
            List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
            for (int i = 0; i < 15; i++) {
                burst.add(send(app.uri("/rest/sync")));
            }
            for (CompletableFuture<HttpResponse<String>> response : burst) {
                int status = response.get().statusCode();
                if (status == 200) {
                    ok++;
                } else {
                    assertThat(status).isEqualTo(429);
                    refused++;
                }
            }
            // Held for its slot, it would pass later than "everything" counted it.
            assertThat(events.count("shaped", RateLimitListener.Event.DELAYED)).isZero();
            assertThat(ok).as("the bucket's ten, and what refilled meanwhile").isBetween(10, 12);
            assertThat(refused).isEqualTo(15 - ok);
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void theBodyReadBeforeTheDecisionIsThereAgainAtTheSlot(Container container) throws Exception {
        Events events = new Events();
        try (App app = start(container, settings("ratelimit.rule.shaped.limit", "2"), events,
                EnumSet.allOf(DispatcherType.class))) {
            // A key read from the form body: the form is read to decide, and again by the method.
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> form = app.post("/rest/form", "user=alice");
                assertThat(form.statusCode()).isEqualTo(200);
                assertThat(form.body()).isEqualTo("ran for alice");
            }
            assertThat(events.count("by-user", RateLimitListener.Event.DELAYED)).isEqualTo(1);
            // An authentication filter before the library's reads the body to check its signature.
            List<CompletableFuture<HttpResponse<String>>> signed = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String body = "payload-" + i;
                signed.add(JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(app.uri("/rest/echo"))
                        .timeout(Duration.ofSeconds(30)).header("X-Signature", body)
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
            }
            List<String> bodies = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> response : signed) {
                HttpResponse<String> done = response.get();
                assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
                bodies.add(done.body());
            }
            assertThat(bodies).containsExactlyInAnyOrder("got:payload-0", "got:payload-1", "got:payload-2",
                    "got:payload-3");
            assertThat(events.count("shaped", RateLimitListener.Event.DELAYED)).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void theApplicationsFiltersBeforeAndAfterTheLimiterSeeOneRequestAndOneAnswer(Container container)
            throws Exception {
        for (Set<DispatcherType> cacheMapped : List.of(EnumSet.of(DispatcherType.REQUEST),
                EnumSet.allOf(DispatcherType.class))) {
            Events events = new Events();
            valkey.flushAll();
            // Before: a cache of the body that hands out a new stream each time it is asked (a
            // common way to let a body be read twice). After: a filter writing a header and a cookie.
            List<DelayHttpTest.AppFilter> filters = List.of(
                    new DelayHttpTest.AppFilter("cache", new RewindingCache(), cacheMapped, false),
                    new DelayHttpTest.AppFilter("trace", new Tracing(), EnumSet.allOf(DispatcherType.class), true));
            try (App app = start(container, settings("ratelimit.rule.shaped.limit", "2"), events,
                    EnumSet.allOf(DispatcherType.class), filters)) {
                List<CompletableFuture<HttpResponse<String>>> signed = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    String body = "payload-" + i;
                    signed.add(JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(app.uri("/rest/echo"))
                            .timeout(Duration.ofSeconds(30)).header("X-Signature", body)
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                            HttpResponse.BodyHandlers.ofString()));
                }
                List<String> bodies = new ArrayList<>();
                for (CompletableFuture<HttpResponse<String>> response : signed) {
                    HttpResponse<String> done = response.get();
                    assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
                    assertThat(done.headers().allValues("X-Trace")).as("the after-filter's header").hasSize(1);
                    assertThat(done.headers().allValues("Set-Cookie")).as("its cookie").hasSize(1);
                    bodies.add(done.body());
                }
                assertThat(bodies).as("cache mapped for %s", cacheMapped)
                        .containsExactlyInAnyOrder("got:payload-0", "got:payload-1", "got:payload-2");
                assertThat(events.count("shaped", RateLimitListener.Event.DELAYED)).isEqualTo(1);
            }
        }
    }

    /** Reads the body once and hands out a new stream over it each time it is asked. */
    static final class RewindingCache implements jakarta.servlet.Filter {
        @Override
        public void doFilter(jakarta.servlet.ServletRequest request, jakarta.servlet.ServletResponse response,
                             jakarta.servlet.FilterChain chain) throws IOException, jakarta.servlet.ServletException {
            byte[] body = request.getInputStream().readAllBytes();
            chain.doFilter(new jakarta.servlet.http.HttpServletRequestWrapper((jakarta.servlet.http.HttpServletRequest) request) {
                @Override
                public jakarta.servlet.ServletInputStream getInputStream() {
                    ByteArrayInputStream in = new ByteArrayInputStream(body);
                    return new jakarta.servlet.ServletInputStream() {
                        @Override
                        public int read() {
                            return in.read();
                        }

                        @Override
                        public int read(byte[] b, int offset, int length) {
                            return in.read(b, offset, length);
                        }

                        @Override
                        public boolean isFinished() {
                            return in.available() == 0;
                        }

                        @Override
                        public boolean isReady() {
                            return true;
                        }

                        @Override
                        public void setReadListener(jakarta.servlet.ReadListener listener) {
                            throw new UnsupportedOperationException();
                        }
                    };
                }
            }, response);
        }
    }

    /** Writes a header and a cookie before the chain, as a tracing filter. */
    static final class Tracing implements jakarta.servlet.Filter {
        @Override
        public void doFilter(jakarta.servlet.ServletRequest request, jakarta.servlet.ServletResponse response,
                             jakarta.servlet.FilterChain chain) throws IOException, jakarta.servlet.ServletException {
            ((jakarta.servlet.http.HttpServletResponse) response).addHeader("X-Trace", "t");
            ((jakarta.servlet.http.HttpServletResponse) response).addCookie(new jakarta.servlet.http.Cookie("seen", "1"));
            chain.doFilter(request, response);
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void aHeldRequestAFilterRefusesAtItsSlotGivesItsPermitBack(Container container) throws Exception {
        Events events = new Events();
        try (App app = start(container, settings("ratelimit.rule.shaped.limit", "2"), events,
                EnumSet.allOf(DispatcherType.class))) {
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> done = JettyApp.HTTP.send(HttpRequest.newBuilder(app.uri("/rest/guarded"))
                        .timeout(Duration.ofSeconds(30)).header("X-Nonce", container + "-" + i).build(),
                        HttpResponse.BodyHandlers.ofString());
                // The third is held; at its slot its nonce is seen again and refused.
                assertThat(done.statusCode()).as(done.body()).isEqualTo(i < 2 ? 200 : 401);
            }
            assertThat(events.count("shaped", RateLimitListener.Event.DELAYED)).isEqualTo(1);
            HttpResponse<String> next = app.get("/rest/inflight");
            assertThat(next.statusCode()).as("the held request's permit is back: %s", next.body()).isEqualTo(200);
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void anUndeployAnswersEveryHeldMethodAndGivesItsUnitsBack(Container container) throws Exception {
        Events events = new Events();
        Map<String, String> slow = settings("ratelimit.rule.shaped.limit", "1", "ratelimit.rule.shaped.window", "2s",
                "ratelimit.rule.shaped.max-delay", "10s");
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        long started;
        long undeployed;
        try (App app = start(container, slow, events, EnumSet.allOf(DispatcherType.class))) {
            assertThat(app.get("/rest/sync").statusCode()).isEqualTo(200);
            started = System.currentTimeMillis();
            for (int i = 0; i < 3; i++) {
                held.add(send(app.uri("/rest/suspended")));
            }
            await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) == 3, "three requests held");
            app.undeploy();
            undeployed = System.currentTimeMillis();
        }
        for (CompletableFuture<HttpResponse<String>> response : held) {
            HttpResponse<String> answered = response.get();
            assertThat(answered.statusCode()).as("answered at the undeploy: %s", answered.body()).isEqualTo(503);
            assertThat(answered.headers().firstValue("Retry-After")).isPresent();
        }
        assertThat(RAN).as("only the first ran").hasSize(1);
        Events after = new Events();
        try (App again = start(container, slow, after, EnumSet.allOf(DispatcherType.class))) {
            CompletableFuture<HttpResponse<String>> next = send(again.uri("/rest/sync"));
            await(() -> after.count("shaped", RateLimitListener.Event.ALLOWED) == 1, "the redeployed app decided");
            // As DelayHttpTest's undeploy: the last held given back first, each whole; Tomcat's
            // unload wait of 2 s lets the first held one's slot pass, given nothing back.
            long since = System.currentTimeMillis() - started;
            long kept = DelayHttpTest.keptAfterUndeploy(container, undeployed - started);
            assertThat(after.longestDelay("shaped").toMillis()).as("held units back")
                    .isLessThanOrEqualTo(kept * 2_000 - since + 50);
            assertThat(next.get().statusCode()).isEqualTo(200);
        }
    }

    private static CompletableFuture<HttpResponse<String>> send(URI uri) {
        return DelayHttpTest.sendAsync(uri);
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        DelayHttpTest.await(condition, what);
    }

    /**
     * The application's own response filter: a header on every answer Jakarta REST writes, and a
     * body on one that has none (as an application that wraps every answer in an envelope).
     */
    public static class Stamp implements ContainerResponseFilter {
        @Override
        public void filter(ContainerRequestContext request, ContainerResponseContext response) {
            response.getHeaders().add("X-Stamp", UUID.randomUUID().toString());
            if (!response.hasEntity()) {
                response.setEntity("no content");
            }
        }
    }

    /** An authentication filter that reads the body to check its signature (here: the body itself), and puts it back. */
    @Priority(Priorities.AUTHENTICATION)
    public static class Signed implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) throws IOException {
            String signature = request.getHeaderString("X-Signature");
            if (signature == null) {
                return;
            }
            byte[] body = request.getEntityStream().readAllBytes();
            if (!signature.equals(new String(body, StandardCharsets.UTF_8))) {
                request.abortWith(Response.status(401).entity("bad signature for [" + new String(body,
                        StandardCharsets.UTF_8) + "]").build());
                return;
            }
            request.setEntityStream(new ByteArrayInputStream(body));
        }
    }

    /** An authentication filter that refuses a nonce seen before: a held request meets it again at its slot. */
    @Priority(Priorities.AUTHENTICATION)
    public static class Nonces implements ContainerRequestFilter {
        private static final Set<String> SEEN = ConcurrentHashMap.newKeySet();

        @Override
        public void filter(ContainerRequestContext request) {
            String nonce = request.getHeaderString("X-Nonce");
            if (nonce != null && !SEEN.add(nonce)) {
                request.abortWith(Response.status(401).entity("nonce seen").build());
            }
        }
    }

    /** The methods: each records when it ran. */
    @Path("/")
    public static class Held {

        /** A synchronous method. */
        @GET
        @Path("sync")
        @RateLimited("shaped")
        public String sync() {
            RAN.add(System.currentTimeMillis());
            return "ran";
        }

        /** A suspended method, resumed from another thread. */
        @GET
        @Path("suspended")
        @RateLimited("shaped")
        public void suspended(@Suspended AsyncResponse response) {
            RAN.add(System.currentTimeMillis());
            CompletableFuture.runAsync(() -> response.resume("ran"));
        }

        /** A method returning a stage. */
        @GET
        @Path("stage")
        @RateLimited("shaped")
        public CompletionStage<String> stage() {
            RAN.add(System.currentTimeMillis());
            return CompletableFuture.supplyAsync(() -> "ran");
        }

        /** Echoes its body. */
        @POST
        @Path("echo")
        @RateLimited("shaped")
        public String echo(String body) {
            return "got:" + body;
        }

        /** Paced, and one at a time. */
        @GET
        @Path("guarded")
        @RateLimited("shaped")
        @RateLimited("inflight")
        public String guarded() {
            return "ran";
        }

        /** One at a time. */
        @GET
        @Path("inflight")
        @RateLimited("inflight")
        public String inflight() {
            return "ran";
        }

        /** Keyed by a form parameter. */
        @POST
        @Path("form")
        @RateLimited("by-user")
        public String form(@FormParam("user") String user) {
            return "ran for " + user;
        }
    }
}
