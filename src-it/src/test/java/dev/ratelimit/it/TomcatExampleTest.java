package dev.ratelimit.it;

import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example WAR on embedded Tomcat 11, the second container in CI beside Jetty 12: its
 * web.xml and microprofile-config.properties as shipped, the headers, a 429, the async servlet,
 * and an undeploy that leaves no connection, pool thread or MBean behind.
 */
@ExtendWith(ValkeyExtension.class)
class TomcatExampleTest {

    private final ValkeyServer valkey;

    TomcatExampleTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void theExampleOnTomcatLimitsAsyncServletsAndUndeploysClean() throws Exception {
        Path war = ExampleWar.war();
        assertThat(war).as("the example WAR (built by the examples/webapp module)").exists();
        valkey.flushAll();
        System.setProperty("ratelimit.valkey.url", valkey.url());
        ExampleWar.PATIENT_TIMEOUTS.forEach(System::setProperty);
        // Tomcat's own leak detection reports, on undeploy, threads and drivers the app left behind.
        List<String> leaks = new CopyOnWriteArrayList<>();
        Logger leakLog = Logger.getLogger("org.apache.catalina.loader.WebappClassLoaderBase");
        Handler leakHandler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                String message = record.getMessage() + " " + Arrays.toString(record.getParameters());
                if (message.contains("failed to stop") || message.contains("memory leak") && !message.contains("add-opens")) {
                    leaks.add(message);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        leakLog.addHandler(leakHandler);
        try (Jedis inspect = valkey.connect()) {
            long clientsBefore = clients(inspect);
            Tomcat tomcat = EmbeddedTomcat.onLoopback();
            Context context = tomcat.addWebapp("", war.toString());
            try {
                tomcat.start();
                assertThat(context.getState().isAvailable()).as("the example deployed").isTrue();
                String root = "http://127.0.0.1:" + EmbeddedTomcat.port(tomcat);

                HttpResponse<String> hello = get(root + "/api/hello");
                assertThat(hello.statusCode()).isEqualTo(200);
                assertThat(hello.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=30");
                assertThat(hello.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v)
                        .startsWith("\"api\";r=4;"));

                HttpResponse<String> async = get(root + "/api/async");
                assertThat(async.statusCode()).as("an async servlet behind the filter").isEqualTo(200);
                assertThat(async.body()).contains("async");
                assertThat(async.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v)
                        .startsWith("\"api\";r=3;"));

                for (int i = 0; i < 3; i++) {
                    assertThat(get(root + (i % 2 == 0 ? "/api/async" : "/api/hello")).statusCode()).isEqualTo(200);
                }
                HttpResponse<String> rejected = get(root + "/api/async");
                assertThat(rejected.statusCode()).isEqualTo(429);
                assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
                assertThat(rejected.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/problem+json"));
                // Its length known, not chunked: the container measures the buffered body when the filter returns.
                assertThat(rejected.headers().firstValue("Content-Length"))
                        .hasValue(Integer.toString(rejected.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
                assertThat(rejected.headers().firstValue("Transfer-Encoding")).isEmpty();
                assertThat(clients(inspect)).isGreaterThan(clientsBefore);
            } finally {
                tomcat.stop();
                tomcat.destroy();
            }
            for (int i = 0; i < 50 && clients(inspect) != clientsBefore; i++) {
                Thread.sleep(20);
            }
            assertThat(clients(inspect)).as("Valkey connections after undeploy").isEqualTo(clientsBefore);
            assertThat(ManagementFactory.getPlatformMBeanServer().queryNames(
                    new ObjectName("dev.ratelimit:type=RateLimiter,*"), null)).as("MBeans after undeploy").isEmpty();
            assertThat(Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                    .filter(t -> t.getContextClassLoader() != null
                            && t.getContextClassLoader().getClass().getName().contains("WebappClassLoader")))
                    .as("threads of the undeployed application").isEmpty();
            assertThat(leaks).as("Tomcat's leak reports on undeploy").isEmpty();
        } finally {
            leakLog.removeHandler(leakHandler);
            System.clearProperty("ratelimit.valkey.url");
            ExampleWar.PATIENT_TIMEOUTS.keySet().forEach(System::clearProperty);
        }
    }

    private static long clients(Jedis inspect) {
        return inspect.clientList().lines().filter(line -> !line.isBlank()).count();
    }

    private static HttpResponse<String> get(String uri) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
