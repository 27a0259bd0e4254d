package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README (environment forms): "An environment variable that matches no setting is logged once as
 * a warning and ignored ... A rule that is configured but not listed in ratelimit.rules is logged
 * once as a warning and not enforced, so an environment may run fewer rules than the file
 * defines". With {@code ratelimit.refresh} on, the settings are read again and again; an
 * unchanged reading must not say it again.
 */
class RefreshUnlistedLogTest {

    private static final String READER = "dev.ratelimit.config.SettingsReader";

    private CapturedLogs logs;

    @BeforeEach
    void listen() {
        logs = CapturedLogs.of(READER);
    }

    @AfterEach
    void stopListening() {
        logs.close();
    }

    @Test
    void aConfiguredRuleNotListedIsLoggedOnceThoughTheSettingsAreReadAgain() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of());
             JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.refresh", "100ms",
                     "ratelimit.rules", "api", "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m",
                     "ratelimit.rule.spare.limit", "5", "ratelimit.rule.spare.window", "1m"))) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            Thread.sleep(2_000);
            assertThat(warnings("Rule 'spare' is configured")).as("warnings about the unlisted rule in 2 s").hasSize(1);
        }
    }

    @Test
    void anEnvironmentVariableThatMatchesNoSettingIsLoggedOnceThoughTheSettingsAreReadAgain() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of());
             JettyApp app = JettyApp.start(JettyApp.settings(valkey.url(), "ratelimit.refresh", "100ms",
                     "ratelimit.rules", "api", "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m"),
                     Map.of("RATELIMIT_NO_SUCH_SETTING", "1"))) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            Thread.sleep(2_000);
            assertThat(warnings("RATELIMIT_NO_SUCH_SETTING")).as("warnings about the variable in 2 s").hasSize(1);
        }
    }

    private List<String> warnings(String containing) {
        return logs.messages(Level.WARNING).stream().filter(m -> m.contains(containing)).toList();
    }
}
