package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README (Configuration): a rule configured but not listed "is logged once as a warning". An
 * application whose annotated resource methods are checked at configuration, before the limits
 * start ({@code RateLimits.configured()} reads the settings for each), and whose first call then
 * starts them, with a refresh on: the warning is said once, not once per annotated method nor
 * once more at the start.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotatedWarningsOnceTest {

    private final ValkeyServer valkey;

    AnnotatedWarningsOnceTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void anUnlistedRuleIsLoggedOnceThoughEachAnnotatedMethodIsCheckedAndTheLimitsStartLater() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger reader = Logger.getLogger("dev.ratelimit.config.SettingsReader");
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel() == Level.WARNING) {
                    warnings.add(new SimpleFormatter().formatMessage(record));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        reader.addHandler(handler);
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.refresh", "100ms",
                "ratelimit.rules", "api,exports",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m",
                "ratelimit.rule.exports.scope", "method",
                "ratelimit.rule.exports.limit", "10", "ratelimit.rule.exports.window", "1m",
                "ratelimit.rule.spare.limit", "5"), false,
                EdgeResources.Annotated.class, Resources.Search.class, Resources.Export.class)) {
            assertThat(app.get("/p").statusCode()).as("the first call, which starts the limits").isEqualTo(200);
            assertThat(app.get("/search").statusCode()).isEqualTo(200);
            Thread.sleep(700);
            List<String> spare = warnings.stream().filter(m -> m.contains("Rule 'spare' is configured")).toList();
            assertThat(spare).as("warnings about the unlisted rule, three annotated methods, limits started lazily")
                    .hasSize(1);
        } finally {
            reader.removeHandler(handler);
        }
    }
}
