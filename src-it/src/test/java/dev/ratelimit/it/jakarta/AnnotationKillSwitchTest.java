package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.enabled=false}, the kill switch, under {@code @RateLimited}: it "lets every
 * request through and reads no other setting", so an application whose methods name rules
 * deploys with it, and every call of a REST or a CDI method goes through, on Jersey, Jetty 12,
 * Weld SE and a real Valkey.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationKillSwitchTest {

    private final ValkeyServer valkey;

    AnnotationKillSwitchTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void theKillSwitchDeploysAnAnnotatedApplicationAndLetsEveryCallThrough() throws Exception {
        valkey.flushAll();
        // The rules left as they were: the operator only turned the switch (RATELIMIT_ENABLED=false).
        Map<String, String> settings = JakartaApp.settings(valkey.url(), "ratelimit.enabled", "false",
                "ratelimit.rules", "api", "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "1", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.key", "global");
        for (boolean withFilter : new boolean[] {false, true}) {
            try (JakartaApp app = JakartaApp.start(settings, withFilter, EdgeResources.Annotated.class);
                 WeldContainer weld = weld(app, ApiService.class)) {
                ApiService api = weld.select(ApiService.class).get();
                for (int i = 0; i < 3; i++) {
                    assertThat(app.get("/p").statusCode()).as("filter " + withFilter).isEqualTo(200);
                    assertThat(api.call()).isEqualTo("ok");
                }
            }
        }
    }
}
