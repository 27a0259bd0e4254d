package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.servlet.RateLimitFilter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code max-delay} through the filter on Jetty 12 and Tomcat 11 with a real Valkey, two app
 * instances sharing it: a burst of twice the limit passes whole, at the rule's rate, never
 * early, while the containers' request threads stay free; a client that hangs up while held,
 * and an undeploy with requests held, give their units back and lose no request; past the max
 * delay, or past the instance's room for held requests, a 429; a servlet that cannot be
 * suspended gets a 429, never a held thread.
 */
@ExtendWith(ValkeyExtension.class)
class DelayHttpTest {

    /** When the application ran each request, epoch ms, in every app of this JVM. */
    private static final ConcurrentLinkedQueue<Long> RAN = new ConcurrentLinkedQueue<>();

    private final ValkeyServer valkey;

    DelayHttpTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    enum Container { JETTY, TOMCAT }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
        RAN.clear();
    }

    /** Ten a second, a bucket of ten; held up to 1.5 s. */
    private Map<String, String> settings(String... more) {
        List<String> pairs = new ArrayList<>(List.of("ratelimit.rules", "shaped",
                "ratelimit.rule.shaped.key", "global",
                "ratelimit.rule.shaped.algorithm", "token-bucket",
                "ratelimit.rule.shaped.limit", "10",
                "ratelimit.rule.shaped.window", "1s",
                "ratelimit.rule.shaped.max-delay", "1500ms"));
        pairs.addAll(List.of(more));
        return JettyApp.settings(valkey.url(), pairs.toArray(String[]::new));
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void aBurstOfTwiceTheLimitPassesAtTheRulesRateAcrossTwoInstancesWithoutHoldingAThread(Container container)
            throws Exception {
        Events events = new Events();
        try (App a = App.start(container, settings(), events); App b = App.start(container, settings(), events)) {
            int idleA = a.busyThreads();
            int idleB = b.busyThreads();
            long t0 = System.currentTimeMillis();
            List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                responses.add(sendAsync((i % 2 == 0 ? a : b).uri("/run")));
            }
            // Ten are held for their slots (the first ten pass now): threads must stay free meanwhile.
            await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) >= 10, "ten requests held");
            int busy = a.busyThreads() - idleA + b.busyThreads() - idleB;
            for (CompletableFuture<HttpResponse<String>> response : responses) {
                HttpResponse<String> done = response.get();
                assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
                assertThat(done.headers().firstValue("RateLimit")).isPresent();
            }
            assertThat(busy).as("request threads busy while ten requests were held (%s)", container)
                    .isLessThanOrEqualTo(2);
            List<Long> ran = RAN.stream().sorted().toList();
            assertThat(ran).hasSize(20);
            for (int i = 10; i < 20; i++) {
                // A bucket of ten, full at t0, has had at most 10 + (t - t0) / 100 ms units by t.
                assertThat(ran.get(i) - t0).as("request %d ran at its slot or later, never early", i)
                        .isGreaterThanOrEqualTo((i - 9) * 100L - 1);
            }
            assertThat(ran.get(19) - t0).as("the last ran about a second after the burst, not later")
                    .isLessThan(1_000 + 3_000);
            assertThat(events.count("shaped", RateLimitListener.Event.REJECTED)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void pastTheMaxDelayOrTheInstancesRoomARequestIsRefusedAndAServletThatCannotWaitIsNeverHeld(Container container)
            throws Exception {
        Events events = new Events();
        // One a second, a bucket of ten, held up to 5 s: slots a second apart.
        Map<String, String> slow = settings("ratelimit.max-delayed-requests", "3", "ratelimit.rule.shaped.window", "10s",
                "ratelimit.rule.shaped.max-delay", "5s");
        try (App app = App.start(container, slow, events)) {
            for (int i = 0; i < 10; i++) {
                assertThat(app.get("/run").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> sync = app.get("/sync");
            assertThat(sync.statusCode()).as("a request behind a filter that cannot go async is refused, not held")
                    .isEqualTo(429);
            List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(sendAsync(app.uri("/run")));
            }
            await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) >= 3, "three requests held");
            HttpResponse<String> fourth = app.get("/run");
            assertThat(fourth.statusCode()).as("no room for a fourth held request").isEqualTo(429);
            assertThat(fourth.headers().firstValue("Retry-After")).isPresent();
            for (CompletableFuture<HttpResponse<String>> response : held) {
                assertThat(response.get().statusCode()).isEqualTo(200);
            }
        }
        valkey.flushAll();
        try (App app = App.start(container, settings(), events)) {
            List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                burst.add(sendAsync(app.uri("/run")));
            }
            int ok = 0;
            int refused = 0;
            for (CompletableFuture<HttpResponse<String>> response : burst) {
                HttpResponse<String> done = response.get();
                if (done.statusCode() == 200) {
                    ok++;
                } else {
                    assertThat(done.statusCode()).isEqualTo(429);
                    assertThat(Long.parseLong(done.headers().firstValue("Retry-After").orElseThrow())).isPositive();
                    refused++;
                }
            }
            // Ten now, fifteen within 1.5 s (a few more as the burst's own time refills), the rest refused.
            assertThat(ok).isBetween(25, 28);
            assertThat(refused).isEqualTo(30 - ok);
        }
    }

    @ParameterizedTest
    @EnumSource(Container.class)
    void anUndeployAnswersEveryHeldRequestAndGivesTheirUnitsBack(Container container) throws Exception {
        Events events = new Events();
        Map<String, String> slow = settings("ratelimit.rule.shaped.limit", "1", "ratelimit.rule.shaped.window", "2s",
                "ratelimit.rule.shaped.max-delay", "10s");
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        long started;
        long undeployed;
        try (App app = App.start(container, slow, events)) {
            assertThat(app.get("/run").statusCode()).isEqualTo(200);
            // The first request's unit was taken before now: it is paid for 2 s after, at the latest.
            started = System.currentTimeMillis();
            for (int i = 0; i < 3; i++) {
                held.add(sendAsync(app.uri("/run")));
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
        try (App again = App.start(container, slow, after)) {
            CompletableFuture<HttpResponse<String>> next = sendAsync(again.uri("/run"));
            await(() -> after.count("shaped", RateLimitListener.Event.ALLOWED) == 1, "the redeployed app decided");
            // The filter gives back the last held first, so each in turn is the last and comes
            // back whole: only the first request's unit stays, the next slot 2 s after the start.
            // Tomcat waits up to 2 s for suspended requests before it stops the filter: the
            // first held one's slot (2 s) comes in that wait, its dispatch fails and, not the last
            // held, it gives nothing back (its slot passes unused); the other two come back.
            long since = System.currentTimeMillis() - started;
            long kept = keptAfterUndeploy(container, undeployed - started);
            assertThat(after.longestDelay("shaped").toMillis()).as("held units back")
                    .isLessThanOrEqualTo(kept * 2_000 - since + 50);
            assertThat(next.get().statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aRequestDecidedForASlotAsTheUndeployBeginsGivesBackInItsTurn() throws Exception {
        // The last of three requests is decided for its slot (its units taken), then stalls before
        // it is held, as a busy machine may stall it, while the application is undeployed.
        CountDownLatch release = new CountDownLatch(1);
        Events events = new Events();
        RateLimitListener stalling = stallingAt(3, events, release);
        Map<String, String> slow = settings("ratelimit.rule.shaped.limit", "1", "ratelimit.rule.shaped.window", "2s",
                "ratelimit.rule.shaped.max-delay", "10s");
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        long started;
        long undeployed;
        try (App app = App.start(Container.JETTY, slow, stalling)) {
            assertThat(app.get("/run").statusCode()).isEqualTo(200);
            started = System.currentTimeMillis();
            for (int i = 1; i <= 3; i++) {
                held.add(sendAsync(app.uri("/run")));
                int decided = i;
                await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) == decided, "held in order");
            }
            CompletableFuture<Void> undeploy = CompletableFuture.runAsync(() -> {
                try {
                    app.undeploy();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // The stalled request goes on once the undeploy is over or has waited for it a while
            // (the filter waits for a request decided for a slot, so that it gives back in turn).
            long waitFrom = System.nanoTime();
            await(() -> undeploy.isDone() || System.nanoTime() - waitFrom > Duration.ofSeconds(1).toNanos(),
                    "the undeploy under way");
            release.countDown();
            undeploy.get(30, TimeUnit.SECONDS);
            undeployed = System.currentTimeMillis();
            for (CompletableFuture<HttpResponse<String>> response : held) {
                assertThat(response.get().statusCode()).as("answered at the undeploy").isEqualTo(503);
            }
        }
        assertThat(RAN).as("only the first ran").hasSize(1);
        Events after = new Events();
        try (App again = App.start(Container.JETTY, slow, after)) {
            CompletableFuture<HttpResponse<String>> next = sendAsync(again.uri("/run"));
            await(() -> after.count("shaped", RateLimitListener.Event.ALLOWED) == 1, "the redeployed app decided");
            // Every held one gave back, the last held first: only the first request's unit stays
            // (unless the undeploy outlasted the first held one's slot).
            long since = System.currentTimeMillis() - started;
            long kept = keptAfterUndeploy(Container.JETTY, undeployed - started);
            assertThat(after.longestDelay("shaped").toMillis()).as("held units back")
                    .isLessThanOrEqualTo(kept * 2_000 - since + 50);
            assertThat(next.get().statusCode()).isEqualTo(200);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"token-bucket", "gcra"})
    void aRequestHeldLateAfterItsSlotWasTakenGivesBackInItsQueuesTurn(String algorithm) throws Exception {
        // Two a second: two pass, then eight are held for slots 0.5 s apart. The sixth one's
        // thread stalls between the store's answer and its hold for longer than two slots (a busy
        // machine, a collection): held that late, it must still give back in its turn.
        CountDownLatch release = new CountDownLatch(1);
        Events events = new Events();
        RateLimitListener stalling = stallingAt(6, events, release);
        Map<String, String> slow = settings("ratelimit.rule.shaped.algorithm", algorithm,
                "ratelimit.rule.shaped.limit", "2", "ratelimit.rule.shaped.window", "1s",
                "ratelimit.rule.shaped.max-delay", "7s");
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        long started;
        long undeployed;
        int ran;
        try (App app = App.start(Container.JETTY, slow, stalling)) {
            assertThat(app.get("/run").statusCode()).isEqualTo(200);
            assertThat(app.get("/run").statusCode()).isEqualTo(200);
            started = System.currentTimeMillis();
            for (int i = 1; i <= 8; i++) {
                held.add(sendAsync(app.uri("/run")));
                int decided = i;
                await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) == decided, "held in order");
            }
            // The stall itself: long enough that, reckoned from its hold, its slot comes after
            // the seventh's and the eighth's.
            Thread.sleep(1_200);
            release.countDown();
            app.undeploy();
            undeployed = System.currentTimeMillis();
            ran = RAN.size() - 2;
        }
        for (CompletableFuture<HttpResponse<String>> response : held) {
            assertThat(response.get().statusCode()).as("ran at its slot or answered at the undeploy").isIn(200, 503);
        }
        Events after = new Events();
        try (App again = App.start(Container.JETTY, slow, after)) {
            CompletableFuture<HttpResponse<String>> next = sendAsync(again.uri("/run"));
            await(() -> after.count("shaped", RateLimitListener.Event.ALLOWED) == 1, "the redeployed app decided");
            // Those that ran count, and a slot the undeploy outlasted may have passed unused
            // (dispatched into the stopping application); every other held one gave back: the
            // next slot is the one after them.
            long passed = Math.min(8, (undeployed - started + 100) / 500);
            long nextSlot = started + 500 * (1 + Math.max(ran, passed));
            assertThat(after.longestDelay("shaped").toMillis()).as("held units back (%d ran)", ran)
                    .isLessThanOrEqualTo(nextSlot - System.currentTimeMillis() + 50);
            assertThat(next.get().statusCode()).isEqualTo(200);
        }
    }

    /**
     * A listener that records into {@code events} and stalls the thread of the {@code nth}
     * request delayed, after its units were taken and before it is held, until {@code release}.
     */
    private static RateLimitListener stallingAt(int nth, Events events, CountDownLatch release) {
        return new RateLimitListener() {
            @Override
            public void onEvent(String rule, Event event) {
                events.onEvent(rule, event);
                if (event == Event.DELAYED && events.count(rule, event) == nth) {
                    try {
                        release.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }

            @Override
            public void onDelay(String rule, long nanos) {
                events.onDelay(rule, nanos);
            }
        };
    }

    /**
     * After one request and three held for its slots (a unit each, 2 s apart, from the first),
     * how many units may stay counted once an undeploy that ended {@code undeployedAfter} ms after
     * the first is over: the first's, and those of held ones whose slot came before the undeploy
     * was over (on a slow machine, or in Tomcat's unload wait of 2 s: dispatched into the stopping
     * application, one not last held gives nothing back, its slot passes unused).
     */
    static long keptAfterUndeploy(Container container, long undeployedAfter) {
        long slotsPassed = Math.min(3, (undeployedAfter + 100) / 2_000);
        return 1 + Math.max(slotsPassed, container == Container.TOMCAT ? 1 : 0);
    }

    static CompletableFuture<HttpResponse<String>> sendAsync(URI uri) {
        return JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(5);
        }
    }

    /** The events and delays the apps reported. */
    static final class Events implements RateLimitListener {
        private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
        private final Map<String, AtomicLong> longest = new ConcurrentHashMap<>();

        @Override
        public void onEvent(String rule, Event event) {
            counts.computeIfAbsent(rule + ' ' + event, k -> new AtomicLong()).incrementAndGet();
        }

        @Override
        public void onDelay(String rule, long nanos) {
            longest.computeIfAbsent(rule, k -> new AtomicLong()).accumulateAndGet(nanos, Math::max);
        }

        long count(String rule, Event event) {
            AtomicLong count = counts.get(rule + ' ' + event);
            return count == null ? 0 : count.get();
        }

        Duration longestDelay(String rule) {
            AtomicLong nanos = longest.get(rule);
            return Duration.ofNanos(nanos == null ? 0 : nanos.get());
        }
    }

    /** Records when it ran and answers {@code ran}; async supported where registered so. */
    static final class RunServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            RAN.add(System.currentTimeMillis());
            response.setContentType("text/plain");
            response.getWriter().write("ran");
        }
    }

    /** A filter that does nothing and does not support async, as many older ones. */
    static final class PlainFilter implements jakarta.servlet.Filter {
        @Override
        public void doFilter(jakarta.servlet.ServletRequest request, jakarta.servlet.ServletResponse response,
                             jakarta.servlet.FilterChain chain) throws IOException, jakarta.servlet.ServletException {
            chain.doFilter(request, response);
        }
    }

    /**
     * A filter of the application's own, for {@code /*}.
     *
     * @param name  its name
     * @param after whether it comes after the limiter (else before)
     */
    record AppFilter(String name, jakarta.servlet.Filter filter, Set<DispatcherType> types, boolean after) {
    }

    /** One app instance on a container: the filter mapped for every dispatcher type, as the example maps it. */
    interface App extends AutoCloseable {

        static App start(Container container, Map<String, String> settings, RateLimitListener listener)
                throws Exception {
            return start(container, settings, listener, EnumSet.allOf(DispatcherType.class), Map.of());
        }

        /**
         * An app with the filter mapped for the given dispatcher types and more servlets
         * (async supported) at their paths.
         */
        static App start(Container container, Map<String, String> settings, RateLimitListener listener,
                         Set<DispatcherType> mapped, Map<String, HttpServlet> servlets) throws Exception {
            return start(container, settings, listener, mapped, servlets, List.of());
        }

        /** The same, with the application's own filters before and after the limiter, for {@code /*}. */
        static App start(Container container, Map<String, String> settings, RateLimitListener listener,
                         Set<DispatcherType> mapped, Map<String, HttpServlet> servlets, List<AppFilter> filters)
                throws Exception {
            return container == Container.JETTY ? JettyInstance.start(settings, listener, mapped, servlets, filters)
                    : TomcatInstance.start(settings, listener, mapped, servlets, filters);
        }

        int port();

        /** The container's request threads running something now. */
        int busyThreads();

        /** Stops the application, the server still running: an undeploy. */
        void undeploy() throws Exception;

        default URI uri(String path) {
            return URI.create("http://127.0.0.1:" + port() + path);
        }

        default HttpResponse<String> get(String path) throws IOException, InterruptedException {
            return JettyApp.HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
        }

        /** Posts a form. */
        default HttpResponse<String> post(String path, String form) throws IOException, InterruptedException {
            return JettyApp.HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    record JettyInstance(Server server, ClassLoader loader) implements App {

        static JettyInstance start(Map<String, String> settings, RateLimitListener listener,
                                   Set<DispatcherType> mapped, Map<String, HttpServlet> servlets,
                                   List<AppFilter> filters) throws Exception {
            ClassLoader loader = new URLClassLoader(new URL[0], DelayHttpTest.class.getClassLoader());
            ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder()
                    .withSources(new PropertiesConfigSource(settings, "test", 100)).build(), loader);
            Server server = new Server(new QueuedThreadPool(16, 4));
            ServerConnector connector = new ServerConnector(server, 1, 1);
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler("/");
            context.setClassLoader(loader);
            context.setAttribute(RateLimitListener.class.getName(), listener);
            // A filter before the limiter that cannot go async: requests through it cannot be held.
            FilterHolder plain = new FilterHolder(new PlainFilter());
            plain.setAsyncSupported(false);
            context.addFilter(plain, "/sync", EnumSet.of(DispatcherType.REQUEST));
            for (AppFilter own : filters) {
                if (!own.after()) {
                    FilterHolder holder = new FilterHolder(own.filter());
                    holder.setAsyncSupported(true);
                    context.addFilter(holder, "/*", EnumSet.copyOf(own.types()));
                }
            }
            FilterHolder limiter = new FilterHolder(RateLimitFilter.class);
            limiter.setAsyncSupported(true);
            context.addFilter(limiter, "/*", EnumSet.copyOf(mapped));
            for (AppFilter own : filters) {
                if (own.after()) {
                    FilterHolder holder = new FilterHolder(own.filter());
                    holder.setAsyncSupported(true);
                    context.addFilter(holder, "/*", EnumSet.copyOf(own.types()));
                }
            }
            servlets.forEach((path, servlet) -> {
                ServletHolder holder = new ServletHolder(servlet);
                holder.setAsyncSupported(true);
                context.addServlet(holder, path);
            });
            ServletHolder run = new ServletHolder(new RunServlet());
            run.setAsyncSupported(true);
            context.addServlet(run, "/run");
            context.addServlet(new ServletHolder(new RunServlet()), "/sync");

            server.setHandler(context);
            server.start();
            return new JettyInstance(server, loader);
        }

        @Override
        public int port() {
            return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
        }

        @Override
        public int busyThreads() {
            return ((QueuedThreadPool) server.getThreadPool()).getBusyThreads();
        }

        @Override
        public void undeploy() throws Exception {
            server.getHandler().stop();
        }

        @Override
        public void close() throws Exception {
            server.stop();
            ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(loader));
        }
    }

    record TomcatInstance(Tomcat tomcat, Map<String, ClassLoader> loader) implements App {

        static TomcatInstance start(Map<String, String> settings, RateLimitListener listener,
                                    Set<DispatcherType> mapped, Map<String, HttpServlet> servlets,
                                    List<AppFilter> filters) throws Exception {
            Tomcat tomcat = EmbeddedTomcat.onLoopback();
            Path docs = Files.createTempDirectory("tomcat-docs");
            Context context = tomcat.addContext("", docs.toString());
            Map<String, ClassLoader> configured = new HashMap<>();
            context.addServletContainerInitializer((classes, servletContext) -> {
                configured.put("loader", servletContext.getClassLoader());
                ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder()
                        .withSources(new PropertiesConfigSource(settings, "test", 100)).build(),
                        servletContext.getClassLoader());
                servletContext.setAttribute(RateLimitListener.class.getName(), listener);
            }, null);
            FilterDef filter = new FilterDef();
            filter.setFilterName("rate-limit");
            filter.setFilterClass(RateLimitFilter.class.getName());
            filter.setAsyncSupported("true");
            FilterDef plain = new FilterDef();
            plain.setFilterName("plain");
            plain.setFilter(new PlainFilter());
            plain.setAsyncSupported("false");
            context.addFilterDef(plain);
            FilterMap plainMapping = new FilterMap();
            plainMapping.setFilterName("plain");
            plainMapping.addURLPattern("/sync");
            context.addFilterMap(plainMapping);
            for (AppFilter own : filters) {
                if (!own.after()) {
                    addFilter(context, own);
                }
            }
            context.addFilterDef(filter);
            FilterMap mapping = new FilterMap();
            mapping.setFilterName("rate-limit");
            mapping.addURLPattern("/*");
            for (DispatcherType type : mapped) {
                mapping.setDispatcher(type.name());
            }
            context.addFilterMap(mapping);
            for (AppFilter own : filters) {
                if (own.after()) {
                    addFilter(context, own);
                }
            }
            Tomcat.addServlet(context, "run", new RunServlet()).setAsyncSupported(true);
            context.addServletMappingDecoded("/run", "run");
            Tomcat.addServlet(context, "sync", new RunServlet());
            context.addServletMappingDecoded("/sync", "sync");
            servlets.forEach((path, servlet) -> {
                String name = "more" + path;
                Tomcat.addServlet(context, name, servlet).setAsyncSupported(true);
                context.addServletMappingDecoded(path, name);
            });
            tomcat.start();
            return new TomcatInstance(tomcat, configured);
        }

        private static void addFilter(Context context, AppFilter own) {
            FilterDef def = new FilterDef();
            def.setFilterName(own.name());
            def.setFilter(own.filter());
            def.setAsyncSupported("true");
            context.addFilterDef(def);
            FilterMap map = new FilterMap();
            map.setFilterName(own.name());
            map.addURLPattern("/*");
            for (DispatcherType type : own.types()) {
                map.setDispatcher(type.name());
            }
            context.addFilterMap(map);
        }

        @Override
        public int port() {
            return EmbeddedTomcat.port(tomcat);
        }

        @Override
        public int busyThreads() {
            return ((org.apache.tomcat.util.threads.ThreadPoolExecutor) tomcat.getConnector().getProtocolHandler()
                    .getExecutor()).getActiveCount();
        }

        @Override
        public void undeploy() throws Exception {
            tomcat.getHost().findChildren()[0].stop();
        }

        @Override
        public void close() throws Exception {
            tomcat.stop();
            tomcat.destroy();
            ClassLoader used = loader.get("loader");
            if (used != null) {
                ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance().getConfig(used));
            }
        }
    }
}
