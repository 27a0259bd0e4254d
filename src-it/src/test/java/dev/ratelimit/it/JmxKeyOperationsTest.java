package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.management.MBeanException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.RuntimeMBeanException;
import java.lang.management.ManagementFactory;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The rules' MBean operations {@code inspect} and {@code reset}, called as a JMX console calls
 * them on a running application: a user locked out over HTTP found and unblocked, on Valkey (with
 * this instance's local leases) and with the rules kept in process.
 */
@ExtendWith(ValkeyExtension.class)
class JmxKeyOperationsTest {

    private final ValkeyServer valkey;

    JmxKeyOperationsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    private static Map<String, String> login(Map<String, String> m) {
        m.put("ratelimit.rules", "jmx-login,jmx-api");
        m.put("ratelimit.rule.jmx-login.match", "/login");
        m.put("ratelimit.rule.jmx-login.algorithm", "sliding-log");
        m.put("ratelimit.rule.jmx-login.limit", "3");
        m.put("ratelimit.rule.jmx-login.window", "15m");
        m.put("ratelimit.rule.jmx-login.key", "param:username");
        m.put("ratelimit.rule.jmx-login.lowercase-key", "true");
        m.put("ratelimit.rule.jmx-api.match", "/api/*");
        m.put("ratelimit.rule.jmx-api.algorithm", "token-bucket");
        m.put("ratelimit.rule.jmx-api.limit", "1000");
        m.put("ratelimit.rule.jmx-api.window", "1h");
        m.put("ratelimit.rule.jmx-api.key", "ip+header:X-Tenant");
        return m;
    }

    private static Object call(String rule, String operation, String keyValues) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        return server.invoke(new ObjectName("dev.ratelimit:type=RateLimiter,rule=" + rule), operation,
                new Object[] {keyValues}, new String[] {String.class.getName()});
    }

    @Test
    void aUserLockedOutIsFoundAndUnblockedFromTheRulesMBean() throws Exception {
        valkey.flushAll();
        try (JettyApp app = JettyApp.start(login(JettyApp.settings(valkey.url())))) {
            lockOutAndUnblock(app, "rl:v1:jmx-login:sliding-log:{param.username:alice}");
        }
    }

    @Test
    void withoutValkeyTheStateKeptInProcessIsInspectedAndReset() throws Exception {
        Map<String, String> settings = login(new java.util.HashMap<>());
        try (JettyApp app = JettyApp.start(settings)) {
            lockOutAndUnblock(app, "kept in this process");
        }
    }

    private static void lockOutAndUnblock(JettyApp app, String where) throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(app.postForm("/login", "username=Alice").statusCode()).isEqualTo(200);
        }
        assertThat(app.postForm("/login", "username=Alice").statusCode()).isEqualTo(429);
        String state = (String) call("jmx-login", "inspect", "Alice");
        assertThat(state).contains(where).contains("rejected now, retry after").contains("0 of 3 remaining");
        String removed = (String) call("jmx-login", "reset", "Alice");
        assertThat(removed).startsWith("removed the state of rule jmx-login for key param.username:alice")
                .contains("0 of 3 remaining");
        assertThat(app.postForm("/login", "username=Alice").statusCode()).isEqualTo(200);
        assertThat((String) call("jmx-login", "inspect", "alice")).contains("2 of 3 remaining");
    }

    @Test
    void theLocalLeasesOfThisInstanceAreShownAndForgotten() throws Exception {
        valkey.flushAll();
        Map<String, String> settings = login(JettyApp.settings(valkey.url()));
        settings.put("ratelimit.rule.jmx-api.local-lease", "50");
        try (JettyApp app = JettyApp.start(settings)) {
            for (int i = 0; i < 20; i++) {
                assertThat(app.get("/api/x", "X-Tenant", "acme").statusCode()).isEqualTo(200);
            }
            String state = (String) call("jmx-api", "inspect", "127.0.0.1 acme");
            assertThat(state).contains("rl:v1:jmx-api:token-bucket:{").contains("local leases of this instance hold")
                    .contains("the unused ones given back within 100 ms");
            call("jmx-api", "reset", "127.0.0.1 acme");
            String after = (String) call("jmx-api", "inspect", "127.0.0.1 acme");
            assertThat(after).contains("1000 of 1000 remaining").doesNotContain("local leases");
        }
    }

    @Test
    void badInputIsAnExceptionAConsoleCanShow() throws Exception {
        try (JettyApp app = JettyApp.start(login(JettyApp.settings(valkey.url())))) {
            assertThatThrownBy(() -> call("jmx-api", "inspect", "acme"))
                    .isInstanceOfAny(RuntimeMBeanException.class, MBeanException.class)
                    .satisfies(e -> {
                        Throwable cause = e.getCause();
                        assertThat(cause).isExactlyInstanceOf(IllegalArgumentException.class).hasNoCause()
                                .hasMessage("rule 'jmx-api' has key ip+header:X-Tenant: give 2 value(s) (ip, header:X-Tenant), not 1");
                    });
        }
    }
}
