package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * README: "A sub-resource's methods are checked when the application starts, not at the first
 * request that reaches them ... An annotation naming an unknown rule ... fails the application's start".
 */
@ExtendWith(ValkeyExtension.class)
class SubResourceChecksTest {

    private final ValkeyServer valkey;

    SubResourceChecksTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private void assertStartFails(Class<?> root, String path) throws Exception {
        JakartaApp app;
        try {
            app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, root);
        } catch (Exception expected) {
            assertThat(RestAnnotationTest.causes(expected)).contains("nope");
            return;
        }
        try (app) {
            HttpResponse<String> r = app.get(path);
            fail("the application started; " + path + " then answered " + r.statusCode());
        }
    }

    /**
     * README: a sub-resource whose locator declares no class of its own (Object, an interface) is
     * checked when a request first reaches it: that request fails, and is not let through unlimited.
     */
    private void assertCheckedAtFirstRequest(Class<?> root, String path) throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false, root)) {
            for (int i = 0; i < 2; i++) {
                assertThat(app.get(path).statusCode()).as(path).isEqualTo(500);
            }
        }
    }

    @Test
    void aWrongRuleUnderALocatorReturningObjectIsRefusedAtTheFirstRequest() throws Exception {
        assertCheckedAtFirstRequest(CheckedSubResources.ObjectLocator.class, "/objloc/sub");
    }

    @Test
    void aWrongRuleOnTheImplementationOfALocatorsInterfaceIsRefusedAtTheFirstRequest() throws Exception {
        assertCheckedAtFirstRequest(CheckedSubResources.InterfaceLocator.class, "/ifloc/sub");
    }

    @Test
    void aClassLevelAnnotationOnASubResourceLimitsItsMethods() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false,
                CheckedSubResources.ClassLocator.class)) {
            assertThat(app.get("/cls/sub/alice").body()).isEqualTo("cls alice");
            assertThat(app.get("/cls/sub/alice").statusCode()).isEqualTo(429);
            assertThat(app.get("/cls/sub/bob").statusCode()).isEqualTo(200);
        }
    }

    /** A class-level annotation limits the class's methods; its locator is no method it limits. */
    @Test
    void aClassLevelAnnotationBesideALocatorStarts() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url()), false,
                CheckedSubResources.ClassLevelWithLocator.class)) {
            assertThat(app.get("/mixed/alice").body()).isEqualTo("mixed alice");
            assertThat(app.get("/mixed/alice").statusCode()).isEqualTo(429);
        }
    }
}
