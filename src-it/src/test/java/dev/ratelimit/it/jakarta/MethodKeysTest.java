package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Keys of method rules: what the method receives, not the text sent (README, annotated methods). */
@ExtendWith(ValkeyExtension.class)
class MethodKeysTest {

    private final ValkeyServer valkey;

    MethodKeysTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private static String describe(HttpResponse<String> r) {
        return r.statusCode() + " RateLimit=[" + LayeredRequestsTest.field(r, "RateLimit") + "] body=" + r.body();
    }

    /** {@code ?id=} gives an {@code int} parameter 0 (Jersey), so it is account 0's second request. */
    @Test
    void anEmptyValueOfAnIntParameterIsTheAccountTheMethodReceives() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, LayeredResources.E.class)) {
            HttpResponse<String> first = app.get("/e/int?id=0");
            assertThat(first.body()).isEqualTo("int 0");
            HttpResponse<String> second = app.get("/e/int?id=");
            assertThat(second.statusCode()).as(describe(second)).isEqualTo(429);
        }
    }

    @Test
    void anEmptyValueOfADefaultedIntParameterIsItsDefault() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, LayeredResources.E.class)) {
            assertThat(app.get("/e/def").body()).isEqualTo("def 5");
            assertThat(app.get("/e/def").statusCode()).isEqualTo(429);
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> blank = app.get("/e/def?id=%20");
                assertThat(blank.statusCode()).as(describe(blank)).isEqualTo(429);
            }
        }
    }

    /**
     * {@code param:username} on a method whose {@code @PathParam("username")} is the user and whose
     * query parameter's own name is {@code username}: a query parameter the client chooses could
     * stand in for the user, so the name is refused at the start as ambiguous.
     */
    @Test
    void aQueryParameterWhoseJavaNameIsThePathParametersNameCannotChooseTheKey() {
        assertThatThrownBy(() -> JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false,
                LayeredResources.Ambiguous.class).close())
                .hasStackTraceContaining("param:username (ratelimit.rule.byuser.key) names 2 parameters");
    }

    /**
     * The servlet filter reads the form first (a route rule keyed by {@code param:username}); with a
     * query parameter of the same name Jersey then gives the method the query's value, and the
     * method rule keys by what the method receives (held).
     */
    @Test
    void aFormParameterReadFirstByTheFilterKeysWhatTheMethodReceives() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url(), "ratelimit.rules",
                "r1,m1,c1,byid,byuser,login,fr", "ratelimit.rule.fr.match", "/e/login",
                "ratelimit.rule.fr.key", "param:username", "ratelimit.rule.fr.limit", "100",
                "ratelimit.rule.fr.window", "1h", "ratelimit.rule.r1.limit", "100"), true, LayeredResources.E.class)) {
            assertThat(app.postForm("/e/login", "username=alice").body()).isEqualTo("login alice");
            assertThat(app.postForm("/e/login", "username=alice").statusCode()).isEqualTo(429);
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = app.postForm("/e/login?username=decoy" + i, "username=alice");
                // Whatever the method receives is what is counted: a second one of it is refused.
                String received = r.body().replace("login ", "");
                HttpResponse<String> again = app.postForm("/e/login?username=decoy" + i, "username=alice");
                assertThat(again.statusCode()).as(received + " " + describe(again)).isEqualTo(429);
            }
        }
    }

    /** The same without the servlet filter: the method rule reads the body itself. */
    @Test
    void aFormParameterWithAQueryOfTheSameNameWithoutTheFilter() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, LayeredResources.E.class)) {
            assertThat(app.postForm("/e/login", "username=alice").body()).isEqualTo("login alice");
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = app.postForm("/e/login?username=decoy" + i, "username=alice");
                assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
            }
        }
    }

    /** Braces, control characters and a huge value: hashed, and the request is still decided. */
    @Test
    void hostileValuesAreStillOneKeyEach() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url(), "ratelimit.rule.r1.limit", "100"), true,
                LayeredResources.E.class)) {
            String huge = "x".repeat(6000);
            for (String user : new String[] {"%7Ba%7D", "a%7D%7Bb", "%01%02", huge, "%E2%80%AE", "a%20b"}) {
                HttpResponse<String> first = app.get("/e/m/" + user);
                if (first.statusCode() == 400) {
                    continue; // the container refuses it before any filter
                }
                assertThat(first.statusCode()).as(user + " " + describe(first)).isIn(200, 429);
                if (first.statusCode() == 429) {
                    assertThat(first.body()).as(user).contains("\"r1\"");
                    continue;
                }
                HttpResponse<String> second = app.get("/e/m/" + user);
                assertThat(second.statusCode()).as(user + " " + describe(second)).isEqualTo(429);
                assertThat(second.body()).contains("\"violated-policies\":[\"m1\"]");
            }
            try (var jedis = valkey.connect()) {
                for (String key : jedis.keys("*")) {
                    assertThat(key.length()).as(key).isLessThan(300);
                    assertThat(key.chars().filter(c -> c == '{').count()).as(key).isLessThanOrEqualTo(1);
                }
            }
        }
    }

    /**
     * A form without the key's {@code @FormParam}, and a query parameter of that name: the method
     * receives null (not counted, README: "A request that lacks the value a rule's key needs ...
     * is not counted"); it must not be counted against the account the query names.
     */
    @Test
    void aQueryParameterDoesNotStandInForAnAbsentFormParameter() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, LayeredResources.E.class)) {
            HttpResponse<String> attack = app.postForm("/e/login?username=victim", "password=guess");
            assertThat(attack.body()).as(describe(attack)).isEqualTo("login null");
            HttpResponse<String> victim = app.postForm("/e/login", "username=victim");
            assertThat(victim.statusCode()).as("the victim's own first login: " + describe(victim)).isEqualTo(200);
        }
    }

    /**
     * The same behind the servlet filter, whose route rule read the form first: Jersey then gives
     * the method the query's value, and the rule counts what the method received (held).
     */
    @Test
    void aQueryParameterDoesNotStandInForAnAbsentFormParameterBehindTheFilter() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url(), "ratelimit.rules",
                "r1,m1,c1,byid,byuser,login,fr", "ratelimit.rule.fr.match", "/e/login",
                "ratelimit.rule.fr.key", "param:password", "ratelimit.rule.fr.limit", "100",
                "ratelimit.rule.fr.window", "1h", "ratelimit.rule.r1.limit", "100"), true, LayeredResources.E.class)) {
            HttpResponse<String> attack = app.postForm("/e/login?username=victim", "password=guess");
            assertThat(attack.body()).isEqualTo("login victim");
            assertThat(app.postForm("/e/login", "username=victim").statusCode()).isEqualTo(429);
        }
    }

    /** UUID, enum and @BeanParam values are keyed as the method receives them (held). */
    @Test
    void convertedTypesKeyWhatTheMethodReceives() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, LayeredResources.E.class)) {
            assertThat(app.get("/e/uuid?id=1-2-3-4-5").body()).isEqualTo("uuid 00000001-0002-0003-0004-000000000005");
            assertThat(app.get("/e/uuid?id=00000001-0002-0003-0004-000000000005").statusCode()).isEqualTo(429);
            valkey.flushAll();
            assertThat(app.get("/e/enum?id=MONDAY").body()).isEqualTo("enum MONDAY");
            assertThat(app.get("/e/enum?id=MONDAY").statusCode()).isEqualTo(429);
            valkey.flushAll();
            assertThat(app.get("/e/bean?id=07").body()).isEqualTo("bean 7");
            assertThat(app.get("/e/bean?id=%2B7").statusCode()).isEqualTo(429);
            assertThat(app.get("/e/bean").body()).isEqualTo("bean 9");
            assertThat(app.get("/e/bean?id=9").statusCode()).isEqualTo(429);
        }
    }
}
