package dev.ratelimit.it;

import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The example WAR deployed on Jetty 12 as a user would deploy it: its own web.xml, its own
 * microprofile-config.properties, SmallRye Config and the filter inside WEB-INF/lib. Also a
 * main, so that a test can run it in a child process whose environment it chooses.
 */
final class ExampleWar {

    /** What the child process prints once it serves, followed by its port. */
    static final String LISTENING = "example WAR listening on port ";

    private ExampleWar() {
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
