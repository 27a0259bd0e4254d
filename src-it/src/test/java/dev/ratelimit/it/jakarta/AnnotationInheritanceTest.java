package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @RateLimited} on the interface method a resource implements, where Jakarta REST finds
 * the method's other annotations: the limit applies (against a real Valkey, Jersey on Jetty 12).
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationInheritanceTest {

    private final ValkeyServer valkey;

    AnnotationInheritanceTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void anAnnotationOnTheInterfaceMethodLimitsTheImplementation() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "1", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global"),
                false, InheritedResources.Implementation.class)) {
            assertThat(app.get("/contract").body()).isEqualTo("ok");
            assertThat(app.get("/contract").statusCode()).isEqualTo(429);
        }
    }
}
