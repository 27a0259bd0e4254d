package dev.ratelimit.it;

import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example WAR deployed on Jetty 12 as a user would deploy it: its own web.xml, its own
 * microprofile-config.properties, SmallRye Config and the filter inside WEB-INF/lib. Also a
 * main, so that a test can run it in a child process whose environment it chooses.
 */
final class ExampleWar {

    /** What the child process prints once it serves, followed by its port. */
    static final String LISTENING = "example WAR listening on port ";

    /**
     * Timeouts for the tests of the example, which otherwise runs with the default 50 ms: every
     * request of those tests must be decided by Valkey, and a busy machine misses 50 ms now and
     * then (README, Sizing the timeout for closed rules). System properties, for a WAR deployed
     * in the test's JVM; {@link #environment} for a child process.
     */
    static final Map<String, String> PATIENT_TIMEOUTS = Map.of(
            "ratelimit.valkey.timeout", "2s", "ratelimit.valkey.connect-timeout", "2s");

    private ExampleWar() {
    }

    /** {@link #PATIENT_TIMEOUTS} as environment variables ({@code RATELIMIT_VALKEY_TIMEOUT}). */
    static Map<String, String> environment(Map<String, String> properties) {
        Map<String, String> environment = new HashMap<>();
        properties.forEach((name, value) -> environment.put(name.toUpperCase(Locale.ROOT)
                .replace('.', '_').replace('-', '_'), value));
        return environment;
    }

    /** The WAR built by the examples/webapp module. */
    static Path war() {
        return Path.of(System.getProperty("example.war", "../examples/webapp/target/ratelimit-example.war"))
                .toAbsolutePath();
    }

    /**
     * Deploys the WAR on a free loopback port; the deployment fails if the filter does not start.
     *
     * @param war the WAR file
     * @return the started server
     * @throws Exception whatever Jetty throws
     */
    static Server start(Path war) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        WebAppContext webapp = new WebAppContext();
        webapp.setContextPath("/");
        webapp.setWar(war.toString());
        webapp.setTempDirectory(tempDirectory());
        webapp.setThrowUnavailableOnStartupException(true);
        server.setHandler(webapp);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return server;
    }

    /** The port a started server listens on. */
    static int port(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    private static java.io.File tempDirectory() throws IOException {
        return Files.createTempDirectory("example-war").toFile();
    }

    /**
     * Reads the output of a child process running {@link #main} until it says its port, or fails
     * with everything it said; then keeps draining it.
     *
     * @param process the child
     * @param output  filled with the lines read until the port
     * @return the port it serves on
     */
    static int awaitPort(Process process, List<String> output) throws Exception {
        BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<Integer> port = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                    synchronized (output) {
                        output.add(line);
                    }
                    if (line.startsWith(ExampleWar.LISTENING)) {
                        return Integer.parseInt(line.substring(ExampleWar.LISTENING.length()).trim());
                    }
                }
                return -1;
            } catch (java.io.IOException e) {
                return -1;
            }
        });
        int found = port.get(60, TimeUnit.SECONDS);
        synchronized (output) {
            assertThat(found).as("the example did not start; its output:\n%s", String.join("\n", output)).isPositive();
        }
        // Keep draining the child's output so it never blocks on a full pipe.
        CompletableFuture.runAsync(() -> {
            try {
                while (reader.readLine() != null) {
                    // discard
                }
            } catch (java.io.IOException e) {
                // the child ended
            }
        });
        return found;
    }

    /**
     * Serves the WAR until standard input closes (the parent test ends it so, or by killing it).
     *
     * @param args the WAR's path
     */
    public static void main(String[] args) throws Exception {
        Server server = start(Path.of(args[0]));
        System.out.println(LISTENING + port(server));
        System.out.flush();
        while (System.in.read() >= 0) {
            // wait for the parent
        }
        server.stop();
    }
}
