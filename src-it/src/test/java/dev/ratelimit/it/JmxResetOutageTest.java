package dev.ratelimit.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rule MBean's {@code reset} while Valkey is down: the user is then locked out by this
 * instance's in-process fallback ({@code on-failure=local}), which the README says the MBean's
 * reset forgets. It must, even though Valkey's own state cannot be read or removed meanwhile,
 * and its answer must say which part was forgotten and which was not.
 */
@ExtendWith(ValkeyExtension.class)
class JmxResetOutageTest {

    private final ValkeyServer valkey;

    JmxResetOutageTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void running() {
        valkey.start();
        valkey.flushAll();
    }

    @AfterEach
    void restarted() {
        valkey.start(); // for the tests that follow, even when this one failed with Valkey stopped
    }

    private Map<String, String> settings() {
        return JettyApp.settings(valkey.url(),
                "ratelimit.valkey.timeout", "100ms",
                "ratelimit.valkey.connect-timeout", "100ms",
                "ratelimit.breaker.open-for", "300ms",
                "ratelimit.rules", "outage-login",
                "ratelimit.rule.outage-login.match", "/login",
                "ratelimit.rule.outage-login.algorithm", "sliding-log",
                "ratelimit.rule.outage-login.limit", "100",
                "ratelimit.rule.outage-login.window", "15m",
                "ratelimit.rule.outage-login.key", "param:username",
                "ratelimit.rule.outage-login.on-failure", "local",
                "ratelimit.rule.outage-login.local-limit", "2");
    }

    /** The MBean's answer, or the message of the exception a console shows. */
    private static String call(String operation, String keyValues) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            return (String) server.invoke(new ObjectName("dev.ratelimit:type=RateLimiter,rule=outage-login"), operation,
                    new Object[] {keyValues}, new String[] {String.class.getName()});
        } catch (javax.management.JMException | RuntimeException e) {
            return "failed: " + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
        }
    }

    @Test
    void resetForgetsTheFallbacksStateWhileValkeyIsDown() throws Exception {
        assertThat(valkey.restartable()).as("this test stops Valkey: it needs a server of its own").isTrue();
        try (JettyApp app = JettyApp.start(settings())) {
            assertThat(app.postForm("/login", "username=carol").statusCode()).isEqualTo(200);
            valkey.stop();
            int refused = 0;
            for (int i = 0; i < 4; i++) {
                refused += app.postForm("/login", "username=carol").statusCode() == 429 ? 1 : 0;
            }
            assertThat(refused).as("the fallback's local-limit of 2 locks carol out").isPositive();

            String answer = call("reset", "carol");

            assertThat(app.postForm("/login", "username=carol").statusCode())
                    .as("carol unblocked by the MBean's reset; it answered: " + answer).isEqualTo(200);
            assertThat(answer).as("the answer says Valkey's state was not removed").contains("Valkey");
        }
    }
}
