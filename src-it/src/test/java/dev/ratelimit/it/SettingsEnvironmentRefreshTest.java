package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ratelimit.valkey.* settings through the settings and the environment: each bad value named
 * by its property; a refresh applies rules and says what waits for a restart.
 */
@ExtendWith(ValkeyExtension.class)
class SettingsEnvironmentRefreshTest {

    private final ValkeyServer server;

    SettingsEnvironmentRefreshTest(ValkeyServer server) {
        this.server = server;
    }

    private Map<String, String> base(String... pairs) {
        Map<String, String> m = JettyApp.settings(server.url(), pairs);
        m.put("ratelimit.rules", "api");
        m.put("ratelimit.rule.api.algorithm", "fixed-window");
        m.put("ratelimit.rule.api.limit", "3");
        m.put("ratelimit.rule.api.window", "1h");
        m.put("ratelimit.rule.api.key", "global");
        m.put("ratelimit.rule.api.on-failure", "closed");
        return m;
    }

    private static String causes(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c).append(" | ");
            for (Throwable s : c.getSuppressed()) {
                sb.append("suppressed ").append(s).append(" | ");
            }
        }
        return sb.toString();
    }

    /** [property, value, text the message must contain besides property] */
    private static final String[][] BAD = {
            {"ratelimit.valkey.timeout", "abc"},
            {"ratelimit.valkey.timeout", "0ms"},
            {"ratelimit.valkey.connect-timeout", "-5ms"},
            {"ratelimit.valkey.pool.max-total", "0"},
            {"ratelimit.valkey.pool.max-idle", "50"},
            {"ratelimit.valkey.pool.max-idle", "-1"},
            {"ratelimit.valkey.pool.max-wait", "soon"},
            {"ratelimit.valkey.pipelines", "65"},
            {"ratelimit.valkey.url", "http://127.0.0.1:6379"},
            {"ratelimit.valkey.url", "redis://127.0.0.1:70000"},
            {"ratelimit.valkey.url", "redis://127.0.0.1:6379/notadb"},
            {"ratelimit.valkey.cluster", "maybe"},
            {"ratelimit.valkey.tls.ca-file", "/nonexistent/ca.pem"},
            {"ratelimit.valkey.sentinel.nodes", "127.0.0.1:99999"},
            {"ratelimit.valkey.sentinel.master", "mymaster"},
    };

    @Test
    void invalidValuesFailTheStartNamingPropertyAndValue() {
        List<String> problems = new ArrayList<>();
        for (boolean env : new boolean[] {false, true}) {
            for (String[] bad : BAD) {
                Map<String, String> settings = base();
                Map<String, String> environment = new HashMap<>();
                String prop = bad[0];
                String value = bad[1];
                if (prop.equals("ratelimit.valkey.sentinel.nodes")) {
                    settings.put("ratelimit.valkey.sentinel.master", "mymaster");
                }
                if (env) {
                    environment.put(prop.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(), value);
                } else {
                    settings.put(prop, value);
                }
                String where = (env ? "env " : "settings ") + prop + "=" + value;
                try {
                    JettyApp app = JettyApp.start(settings, environment);
                    HttpResponse<String> r = null;
                    try {
                        r = app.get("/x");
                    } catch (Exception e) {
                        // ignore
                    }
                    app.close();
                    problems.add(where + ": app started (first GET " + (r == null ? "?" : r.statusCode()) + ")");
                } catch (Throwable t) {
                    String msg = causes(t);
                    if (!msg.contains(prop)) {
                        problems.add(where + ": message lacks the property: " + msg);
                    } else if (!msg.contains(value)) {
                        problems.add(where + ": message lacks the value: " + msg);
                    }
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    /** The environment's URL and timeout override the file's: counts reach the env's Valkey. */
    @Test
    void environmentOverridesValkeySettings() throws Exception {
        server.flushAll();
        Map<String, String> settings = base();
        settings.put("ratelimit.valkey.url", "redis://127.0.0.1:1");
        settings.put("ratelimit.key-prefix", "envtest");
        Map<String, String> env = Map.of("RATELIMIT_VALKEY_URL", server.url(), "RATELIMIT_VALKEY_TIMEOUT", "1s",
                "RATELIMIT_VALKEY_POOL_MAX_TOTAL", "4", "RATELIMIT_VALKEY_CONNECT_TIMEOUT", "500ms");
        try (JettyApp app = JettyApp.start(settings, env)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                statuses.add(app.get("/x").statusCode());
            }
            assertThat(statuses).containsExactly(200, 200, 200, 429);
        }
        try (Jedis j = server.connect()) {
            assertThat(j.keys("envtest:*")).isNotEmpty();
        }
    }

    @Test
    void refreshAppliesRulesAndReportsTimeoutNeedsRestart() throws Exception {
        server.flushAll();
        EditableConfigSource source = new EditableConfigSource("editable", 500);
        source.values.putAll(base("ratelimit.refresh", "100ms", "ratelimit.rule.api.key", "header:X-K"));
        try (CapturedLogs logs = CapturedLogs.of("dev.ratelimit");
             JettyApp app = JettyApp.start(source)) {
            assertThat(app.get("/x", "X-K", "a").statusCode()).isEqualTo(200);
            source.values.put("ratelimit.rule.api.limit", "1");
            app.refreshSettings();
            assertThat(app.get("/x", "X-K", "a").statusCode()).as("limit lowered to 1 applies").isEqualTo(429);
            source.values.put("ratelimit.rule.api.limit", "5");
            source.values.put("ratelimit.valkey.timeout", "3s");
            app.refreshSettings();
            assertThat(app.get("/x", "X-K", "a").statusCode()).as("limit raised to 5 applies").isEqualTo(200);
            assertThat(String.join("\n", allLogs(logs))).as("logs").contains("ratelimit.valkey.timeout")
                    .containsIgnoringCase("restart");
            // timeout alone
            source.values.put("ratelimit.valkey.timeout", "4s");
            int before = allLogs(logs).size();
            app.refreshSettings();
            List<String> after = allLogs(logs).subList(before, allLogs(logs).size());
            assertThat(String.join("\n", after)).as("timeout-only refresh is reported").contains("ratelimit.valkey.timeout");
            // a bad refresh is refused whole, naming property and value
            source.values.put("ratelimit.rule.api.limit", "1");
            source.values.put("ratelimit.valkey.connect-timeout", "bogus");
            before = allLogs(logs).size();
            app.refreshSettings();
            after = allLogs(logs).subList(before, allLogs(logs).size());
            assertThat(String.join("\n", after)).contains("ratelimit.valkey.connect-timeout").contains("bogus");
            assertThat(app.get("/x", "X-K", "a").statusCode()).as("old limit 5 kept").isEqualTo(200);
        }
    }

    private static List<String> allLogs(CapturedLogs logs) {
        return logs.records().stream().map(r -> r.getLevel() + " " + r.getLoggerName() + ": " + CapturedLogs.message(r))
                .toList();
    }
}
