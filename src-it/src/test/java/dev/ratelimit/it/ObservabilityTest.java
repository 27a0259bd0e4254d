package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.List;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/** Per-rule counters over JMX and through the application's listener. */
@ExtendWith(ValkeyExtension.class)
class ObservabilityTest {

    private final ValkeyServer valkey;

    ObservabilityTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void countersReachJmxAndTheListener() throws Exception {
        valkey.flushAll();
        Map<String, LongAdder> heard = new ConcurrentHashMap<>();
        RateLimitListener listener = new RateLimitListener() {
            @Override
            public void onEvent(String rule, Event event) {
                heard.computeIfAbsent(rule + ":" + event, k -> new LongAdder()).increment();
            }
        };
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "observed,watching",
                "ratelimit.rule.observed.limit", "3", "ratelimit.rule.observed.window", "1m",
                "ratelimit.rule.observed.count-rejected", "true", // every request reaches Valkey
                "ratelimit.rule.watching.limit", "1", "ratelimit.rule.watching.window", "1m",
                "ratelimit.rule.watching.shadow", "true");
        try (JettyApp app = JettyApp.start(m, Map.of(), listener)) {
            for (int i = 0; i < 5; i++) {
                app.get("/");
            }
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName observed = new ObjectName("dev.ratelimit:type=RateLimiter,rule=observed");
            assertThat(server.getAttribute(observed, "Allowed")).isEqualTo(3L);
            assertThat(server.getAttribute(observed, "Rejected")).isEqualTo(2L);
            assertThat(server.getAttribute(observed, "StoreErrors")).isEqualTo(0L);
            assertThat(server.getAttribute(observed, "BreakerOpen")).isEqualTo(false);
            ObjectName watching = new ObjectName("dev.ratelimit:type=RateLimiter,rule=watching");
            assertThat(server.getAttribute(watching, "ShadowRejected")).isEqualTo(4L);

            assertThat(heard.get("observed:ALLOWED").sum()).isEqualTo(3);
            assertThat(heard.get("observed:REJECTED").sum()).isEqualTo(2);
            assertThat(heard.get("watching:SHADOW_REJECTED").sum()).isEqualTo(4);
        }
        assertThat(ManagementFactory.getPlatformMBeanServer()
                .isRegistered(new ObjectName("dev.ratelimit:type=RateLimiter,rule=observed")))
                .as("unregistered when the filter is destroyed").isFalse();
    }

    /**
     * The application's listener is its code: when it throws, an exception or an Error (a failed
     * assertion), requests are still limited, never a 500.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aListenerThatThrowsNeverBreaksARequestNorItsLimit(boolean error) throws Exception {
        valkey.flushAll();
        LongAdder calls = new LongAdder();
        RateLimitListener throwing = new RateLimitListener() {
            @Override
            public void onEvent(String rule, Event event) {
                calls.increment();
                if (error) {
                    throw new AssertionError("a metrics bridge's failed assertion");
                }
                throw new IllegalStateException("a broken metrics bridge");
            }
        };
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.limit", "2", "ratelimit.rule.api.window", "1m");
        try (JettyApp app = JettyApp.start(m, Map.of(), throwing)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                statuses.add(app.get("/").statusCode());
            }
            assertThat(statuses).containsExactly(200, 200, 429, 429);
            // allowed, allowed and near the limit, rejected, rejected by the deny cache.
            assertThat(calls.sum()).as("every event still delivered").isEqualTo(6);
        }
    }

    /**
     * A hot redeploy: the new deployment of the same application (same virtual server and
     * context path) starts while the old one still runs. It takes the rule's MBean name over
     * (no {@code ,instance=2}), and the old one, stopping, leaves it registered.
     */
    @Test
    void aRedeployedApplicationKeepsItsMBeanNames() throws Exception {
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "redeployed",
                "ratelimit.rule.redeployed.limit", "3", "ratelimit.rule.redeployed.window", "1m");
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("dev.ratelimit:type=RateLimiter,rule=redeployed");
        JettyApp old = JettyApp.start(m);
        Object oldRegistration = server.getAttribute(name, "Registration");
        try (JettyApp redeployed = JettyApp.start(m)) {
            assertThat(server.queryNames(new ObjectName("dev.ratelimit:type=RateLimiter,rule=redeployed,*"), null))
                    .as("one name, taken over").containsExactly(name);
            assertThat(server.getAttribute(name, "Registration")).isNotEqualTo(oldRegistration);
            old.close();
            assertThat(server.isRegistered(name)).as("the old deployment left the new one's MBean").isTrue();
            redeployed.get("/");
            assertThat(server.getAttribute(name, "Allowed")).as("the new deployment's counters").isEqualTo(1L);
        } finally {
            old.close();
        }
        assertThat(server.isRegistered(name)).as("unregistered when the new deployment stops").isFalse();
    }
}
