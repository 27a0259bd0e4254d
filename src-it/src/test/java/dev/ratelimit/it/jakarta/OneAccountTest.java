package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One request, one account: the servlet filter and {@code @RateLimited} registered together, as
 * the example application registers them, on Jersey and Weld with a real Valkey. Each test is one
 * way the two layers used to break their promises where they met.
 */
@ExtendWith(ValkeyExtension.class)
class OneAccountTest {

    private final ValkeyServer valkey;

    OneAccountTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings(String... pairs) {
        return JakartaApp.settings(valkey.url(), pairs);
    }

    private static int allowed(JakartaApp app, List<String> paths) throws Exception {
        int allowed = 0;
        for (String path : paths) {
            int status = app.get(path).statusCode();
            assertThat(status).as(path).isIn(200, 429);
            allowed += status == 200 ? 1 : 0;
        }
        return allowed;
    }

    private static List<String> numbered(String format, int count) {
        return java.util.stream.IntStream.rangeClosed(1, count).mapToObj(i -> String.format(format, i)).toList();
    }

    /** Item 1: a query parameter named like the method rule's key lifted the method's limit. */
    @Test
    void aQueryParameterNamedLikeTheKeyDoesNotLiftTheMethodsLimit() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings("ratelimit.rules", "greet",
                "ratelimit.rule.greet.scope", "method", "ratelimit.rule.greet.algorithm", "fixed-window",
                "ratelimit.rule.greet.limit", "3", "ratelimit.rule.greet.window", "1m",
                "ratelimit.rule.greet.key", "param:name"), true, AccountResources.Greet.class)) {
            assertThat(allowed(app, numbered("/greet/alice?name=q%d", 10))).isEqualTo(3);
            // Another name has its own three.
            assertThat(allowed(app, List.of("/greet/bob", "/greet/bob?name=alice"))).isEqualTo(2);
            assertThat(valkey.connect().keys("*param.name:q*")).isEmpty();
        }
    }

    /** Item 1, CDI: a query parameter named like the CDI method's key lifted its limit. */
    @Test
    void aQueryParameterNamedLikeACdiMethodsKeyDoesNotLiftItsLimit() throws Exception {
        Map<String, String> settings = settings("ratelimit.rules", "welcome,reset,daily",
                "ratelimit.rule.welcome.scope", "method", "ratelimit.rule.welcome.algorithm", "fixed-window",
                "ratelimit.rule.welcome.limit", "2", "ratelimit.rule.welcome.window", "1h",
                "ratelimit.rule.welcome.key", "param:account",
                // MailService's other methods' rules.
                "ratelimit.rule.reset.scope", "method", "ratelimit.rule.reset.limit", "3",
                "ratelimit.rule.reset.window", "1h", "ratelimit.rule.reset.key", "param:accountId",
                "ratelimit.rule.daily.scope", "method", "ratelimit.rule.daily.limit", "4",
                "ratelimit.rule.daily.window", "1d", "ratelimit.rule.daily.key", "global");
        try (JakartaApp plain = JakartaApp.start(settings, false);
             WeldContainer weld = weld(plain, MailService.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings, true,
                     new AccountResources.Welcome(weld.select(MailService.class).get()))) {
            int queued = 0;
            for (int i = 1; i <= 10; i++) {
                HttpResponse<String> response = app.postForm("/welcome/5?account=" + (100 + i), "");
                assertThat(response.statusCode()).isIn(200, 429);
                queued += response.statusCode() == 200 ? 1 : 0;
            }
            assertThat(queued).isEqualTo(2);
            assertThat(weld.select(MailService.class).get().sent()).containsExactly("welcome:5", "welcome:5");
        }
    }

    /** Item 2: the key is what the method receives: its @DefaultValue, its converted number, a bean's field. */
    @Test
    void theKeyIsWhatTheMethodReceives() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings("ratelimit.rules", "user,item",
                "ratelimit.rule.user.scope", "method", "ratelimit.rule.user.limit", "3",
                "ratelimit.rule.user.window", "1h", "ratelimit.rule.user.key", "param:user",
                "ratelimit.rule.item.scope", "method", "ratelimit.rule.item.limit", "2",
                "ratelimit.rule.item.window", "1h", "ratelimit.rule.item.key", "param:id"), true,
                AccountResources.Received.class)) {
            // Without ?user= the method receives "anonymous": one caller with "?user=anonymous".
            assertThat(allowed(app, List.of("/received/user", "/received/user?user=anonymous", "/received/user",
                    "/received/user", "/received/user?user=anonymous", "/received/bean"))).isEqualTo(3);
            // A bean parameter's field, its default too: the same caller.
            assertThat(allowed(app, List.of("/received/bean?user=bob", "/received/user?user=bob",
                    "/received/bean?user=bob", "/received/bean?user=bob", "/received/bean"))).isEqualTo(3);
            // 7, 07 and +7 are the one item 7.
            assertThat(allowed(app, List.of("/received/item?id=7", "/received/item?id=07",
                    "/received/item?id=%2B7", "/received/item?id=8"))).isEqualTo(3);
            assertThat(valkey.connect().keys("*param.id:07*")).isEmpty();
        }
    }

    /** Item 3: an annotation on a sub-resource locator was ignored; it fails the start, naming the method. */
    @Test
    void anAnnotatedLocatorFailsTheStart() {
        assertThatThrownBy(() -> JakartaApp.start(settings("ratelimit.rules", "greet",
                "ratelimit.rule.greet.scope", "method", "ratelimit.rule.greet.limit", "2",
                "ratelimit.rule.greet.window", "1h"), true, AccountResources.AnnotatedLocator.class).close())
                .hasStackTraceContaining("AnnotatedLocator.items, a sub-resource locator");
    }

    /** Items 4 and 5: both layers on one request: every rule's fields, and a refusal takes nothing of the other. */
    @Test
    void bothLayersOnOneRequestAnnounceEveryRuleAndARefusalTakesNothing() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings("ratelimit.rules", "a,b",
                "ratelimit.rule.a.match", "/mix/*", "ratelimit.rule.a.algorithm", "fixed-window",
                "ratelimit.rule.a.limit", "10", "ratelimit.rule.a.window", "1h", "ratelimit.rule.a.key", "global",
                "ratelimit.rule.b.scope", "method", "ratelimit.rule.b.algorithm", "token-bucket",
                "ratelimit.rule.b.limit", "2", "ratelimit.rule.b.window", "1h", "ratelimit.rule.b.key", "global"),
                true, AccountResources.Mix.class)) {
            HttpResponse<String> first = app.get("/mix");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.headers().allValues("RateLimit-Policy")).singleElement().satisfies(policy ->
                    assertThat(policy).startsWith("\"a\";q=10;").contains(", \"b\";q=2;"));
            assertThat(first.headers().allValues("RateLimit")).singleElement().satisfies(fields ->
                    assertThat(fields).startsWith("\"a\";r=9;").contains(", \"b\";r=1;"));
            assertThat(app.get("/mix").statusCode()).isEqualTo(200);
            for (int i = 0; i < 8; i++) {
                HttpResponse<String> refused = app.get("/mix");
                assertThat(refused.statusCode()).isEqualTo(429);
                assertThat(refused.body()).contains("\"violated-policies\":[\"b\"]");
                // a gave back what it took: 8 left after the two allowed.
                assertThat(refused.headers().firstValue("RateLimit")).hasValueSatisfying(fields ->
                        assertThat(fields).startsWith("\"a\";r=8;").contains("\"b\";r=0;"));
            }
            // a holds 8 for the rest of its routes.
            assertThat(allowed(app, numbered("/mix/other?n=%d", 9))).isEqualTo(8);
        }
    }

    /** Item 6: a rule written for an annotation limited endpoints that are not annotated. */
    @Test
    void aMethodRuleDoesNotLimitOtherEndpoints() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings("ratelimit.rules", "reset",
                "ratelimit.rule.reset.scope", "method", "ratelimit.rule.reset.key", "param:accountId",
                "ratelimit.rule.reset.limit", "3", "ratelimit.rule.reset.window", "1d"), true,
                AccountResources.Accounts.class)) {
            assertThat(allowed(app, numbered("/accounts?accountId=7&n=%d", 6))).isEqualTo(6);
            assertThat(valkey.connect().keys("*")).isEmpty();
        }
    }

    /** Item 6, the settings side: a rule that is both is refused, naming the property to set. */
    @Test
    void anAnnotationNamingARouteRuleFailsTheStart() {
        assertThatThrownBy(() -> JakartaApp.start(settings("ratelimit.rules", "greet",
                "ratelimit.rule.greet.limit", "2", "ratelimit.rule.greet.window", "1h",
                "ratelimit.rule.greet.key", "param:name"), true, AccountResources.Greet.class).close())
                .hasStackTraceContaining("names a route rule")
                .hasStackTraceContaining("ratelimit.rule.greet.scope=method");
    }

    /** Item 7: a sub-resource method naming an unknown rule failed each request with 500; it fails the start. */
    @Test
    void anUnknownRuleUnderASubResourceFailsTheStart() {
        assertThatThrownBy(() -> JakartaApp.start(settings("ratelimit.rules", "greet",
                "ratelimit.rule.greet.scope", "method", "ratelimit.rule.greet.limit", "2",
                "ratelimit.rule.greet.window", "1h"), true, AccountResources.TypoLocator.class).close())
                .hasStackTraceContaining("@RateLimited(\"no-such-rule\") on " + AccountResources.Typo.class.getName()
                        + ".list names no rule");
    }

    /** A limited sub-resource reached through a plain locator is decided when a request reaches it. */
    @Test
    void aSubResourcesAnnotationIsDecided() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings("ratelimit.rules", "shelf",
                "ratelimit.rule.shelf.scope", "method", "ratelimit.rule.shelf.limit", "2",
                "ratelimit.rule.shelf.window", "1h", "ratelimit.rule.shelf.key", "param:shelf"), true,
                AccountResources.Library.class)) {
            assertThat(allowed(app, List.of("/library/a", "/library/a", "/library/a", "/library/b"))).isEqualTo(3);
        }
    }
    /**
     * A method's fields stay off a 3xx ({@code on-redirects=false}) when the filter decided no
     * rule of its own: it wrapped the response only when it had fields, so the method's, written
     * later, stayed on a redirection.
     */
    @Test
    void aMethodsFieldsStayOffARedirectionWhenTheFilterDecidedNothing() throws Exception {
        Map<String, String> rules = settings("ratelimit.rules", "moves",
                "ratelimit.rule.moves.scope", "method", "ratelimit.rule.moves.limit", "100",
                "ratelimit.rule.moves.window", "1m");
        try (JakartaApp app = JakartaApp.start(rules, true, Moves.class)) {
            HttpResponse<String> stays = app.get("/stays");
            assertThat(stays.statusCode()).isEqualTo(200);
            assertThat(stays.headers().firstValue("RateLimit")).isPresent();
            HttpResponse<String> moved = app.get("/moved");
            assertThat(moved.statusCode()).isEqualTo(303);
            assertThat(moved.headers().firstValue("RateLimit")).as("a 303's fields").isEmpty();
            assertThat(moved.headers().firstValue("RateLimit-Policy")).isEmpty();
        }
        Map<String, String> onRedirects = new java.util.HashMap<>(rules);
        onRedirects.put("ratelimit.headers.on-redirects", "true");
        try (JakartaApp app = JakartaApp.start(onRedirects, true, Moves.class)) {
            assertThat(app.get("/moved").headers().firstValue("RateLimit")).as("asked for on a 3xx").isPresent();
        }
    }

    /** A method that answers, and one that redirects. */
    @jakarta.ws.rs.Path("/")
    public static class Moves {

        /** Answers. */
        @jakarta.ws.rs.GET
        @jakarta.ws.rs.Path("stays")
        @dev.ratelimit.jakarta.RateLimited("moves")
        public String stays() {
            return "here";
        }

        /** Sends the client elsewhere. */
        @jakarta.ws.rs.GET
        @jakarta.ws.rs.Path("moved")
        @dev.ratelimit.jakarta.RateLimited("moves")
        public jakarta.ws.rs.core.Response moved() {
            return jakarta.ws.rs.core.Response.seeOther(java.net.URI.create("/stays")).build();
        }
    }
    /**
     * A CDI bean reached as a sub-resource (a locator returns its client proxy) is decided once:
     * Jakarta REST names its method by the proxy's override, the interceptor by the bean's, and
     * the two were taken for two methods, the request counted twice.
     */
    @Test
    void aCdiBeanReachedByALocatorIsDecidedOnce() throws Exception {
        Map<String, String> rules = settings("ratelimit.rules", "located",
                "ratelimit.rule.located.scope", "method", "ratelimit.rule.located.limit", "10",
                "ratelimit.rule.located.window", "1h");
        try (JakartaApp plain = JakartaApp.start(rules, false);
             WeldContainer weld = weld(plain, LocatedBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(rules, true, new Locator(weld.select(LocatedBean.class).get()))) {
            for (int i = 1; i <= 3; i++) {
                HttpResponse<String> response = app.get("/located");
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                assertThat(response.headers().firstValue("RateLimit").orElse(""))
                        .as("request %d decided once", i).startsWith("\"located\";r=" + (10 - i) + ";");
            }
        }
    }

    /** The root resource whose locator returns the CDI bean, the request it serves made current for CDI. */
    @jakarta.ws.rs.Path("/")
    public static class Locator {

        private final LocatedBean bean;

        @jakarta.ws.rs.core.Context
        private jakarta.servlet.http.HttpServletRequest request;

        Locator(LocatedBean bean) {
            this.bean = bean;
        }

        /**
         * The bean, as a sub-resource.
         *
         * @return its client proxy
         */
        @jakarta.ws.rs.Path("located")
        public LocatedBean located() {
            BatchResetResource.CURRENT.set(request);
            return bean;
        }
    }
}
