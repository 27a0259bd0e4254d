package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Undeploy and redeploy: nothing the filter opened outlives it (threads, connections, MBeans). */
@ExtendWith(ValkeyExtension.class)
class UndeployTest {

    private final ValkeyServer valkey;

    UndeployTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void redeployingLeavesNoThreadConnectionOrMBeanBehind() throws Exception {
        valkey.flushAll();
        Map<String, String> m = JettyApp.settings(valkey.url(), "ratelimit.rules", "undeployed",
                "ratelimit.rule.undeployed.limit", "100", "ratelimit.rule.undeployed.window", "1m");
        try (Jedis inspect = valkey.connect()) {
            long clientsBefore = clients(inspect);
            long evictorsBefore = poolThreads();
            for (int deploy = 0; deploy < 3; deploy++) {
                try (JettyApp app = JettyApp.start(m)) {
                    for (int i = 0; i < 5; i++) {
                        assertThat(app.get("/").statusCode()).isEqualTo(200);
                    }
                    assertThat(clients(inspect)).as("the app holds connections while deployed")
                            .isGreaterThan(clientsBefore);
                }
                awaitClients(inspect, clientsBefore);
                assertThat(clients(inspect)).as("connections after undeploy %d", deploy).isEqualTo(clientsBefore);
                assertThat(poolThreads()).as("pool threads after undeploy %d", deploy).isLessThanOrEqualTo(evictorsBefore);
                assertThat(ManagementFactory.getPlatformMBeanServer().queryNames(
                        new ObjectName("dev.ratelimit:type=RateLimiter,rule=undeployed,*"), null))
                        .as("MBeans after undeploy %d", deploy).isEmpty();
            }
        }
    }

    private static long clients(Jedis inspect) {
        return inspect.clientList().lines().filter(line -> !line.isBlank()).count();
    }

    /** Valkey drops a closed connection from CLIENT LIST a moment after the socket closes. */
    private static void awaitClients(Jedis inspect, long expected) throws InterruptedException {
        for (int i = 0; i < 50 && clients(inspect) != expected; i++) {
            Thread.sleep(20);
        }
    }

    private static long poolThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> t.getName().contains("commons-pool") || t.getName().contains("evictor")).count();
    }
}
