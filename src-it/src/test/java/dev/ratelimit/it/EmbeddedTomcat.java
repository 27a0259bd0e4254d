package dev.ratelimit.it;

import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** An embedded Tomcat 11 as the tests deploy on it: a base directory of its own, loopback only. */
final class EmbeddedTomcat {

    private EmbeddedTomcat() {
    }

    /**
     * A Tomcat listening on a free port of 127.0.0.1, its base and application directories a new
     * temporary one, and, for a WAR added with {@code addWebapp}, without Tomcat's default
     * {@code web.xml}, which declares a JSP engine embedded Tomcat lacks.
     *
     * @return the Tomcat, not started
     * @throws IOException if the directory cannot be made
     */
    static Tomcat onLoopback() throws IOException {
        Tomcat tomcat = new Tomcat();
        Path base = Files.createTempDirectory("tomcat");
        tomcat.setBaseDir(base.toString());
        tomcat.getHost().setAppBase(base.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        tomcat.setConnector(connector);
        tomcat.setAddDefaultWebXmlToWebapp(false);
        return tomcat;
    }

    /**
     * The port a started Tomcat listens on.
     *
     * @param tomcat a Tomcat of {@link #onLoopback()}, started
     * @return its port
     */
    static int port(Tomcat tomcat) {
        return tomcat.getConnector().getLocalPort();
    }
}
