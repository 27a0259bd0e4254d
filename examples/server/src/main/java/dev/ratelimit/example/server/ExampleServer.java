package dev.ratelimit.example.server;

import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Serves the example WAR on embedded Jetty 12 at {@code localhost:8080} ({@code PORT} to
 * change it). The limiter's store is, in this order: {@code VALKEY_URL}; a Valkey answering on
 * {@code localhost:6379}; a throwaway {@code valkey-server} started here, if one is installed;
 * otherwise the in-process limiter. Not packaged in the WAR.
 */
public final class ExampleServer {

    private ExampleServer() {
    }

    /**
     * Starts the server and waits.
     *
     * @param args the path of the WAR
     * @throws Exception when Jetty cannot start
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !new File(args[0]).isFile()) {
            System.err.println("usage: ExampleServer <path of ratelimit-example.war> (build it with ./mvnw package)");
            System.exit(2);
        }
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        Optional<Process> throwaway = chooseValkey();

        Server server = new Server(new InetSocketAddress("localhost", port));
        WebAppContext webapp = new WebAppContext();
        webapp.setContextPath("/");
        webapp.setWar(args[0]);
        webapp.setThrowUnavailableOnStartupException(true);
        server.setHandler(webapp);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> throwaway.ifPresent(Process::destroy)));
        try {
            server.start();
        } catch (Exception e) {
            // A failed start must not leave the throwaway server running behind it.
            throwaway.ifPresent(Process::destroy);
            server.stop();
            throw e;
        }

        String base = "http://localhost:" + port;
        System.out.println();
        System.out.println("Example running at " + base + " (Ctrl-C to stop). Try:");
        System.out.println("  curl -i " + base + "/api/hello");
        System.out.println("  for i in $(seq 7); do curl -s -o /dev/null -w '%{http_code}\\n' -d username=alice " + base + "/login; done");
        System.out.println("  curl -i -d username=alice " + base + "/login");
        System.out.println("  curl -i '" + base + "/search?q=valkey'");
        System.out.println("  curl -i -d 'prompt=write a haiku about valkey' " + base + "/complete");
        System.out.println("  curl -s " + base + "/metrics | grep ^ratelimit_");
        System.out.println();
        server.join();
    }

    /** Picks the store and passes its URL to the application as a system property. */
    private static Optional<Process> chooseValkey() throws IOException, InterruptedException {
        String url = firstNonBlank(System.getenv("RATELIMIT_VALKEY_URL"), System.getenv("VALKEY_URL"));
        if (url != null) {
            System.setProperty("ratelimit.valkey.url", url);
            System.out.println("Using Valkey at " + redact(url));
            return Optional.empty();
        }
        if (answersPing(6379)) {
            System.setProperty("ratelimit.valkey.url", "redis://localhost:6379");
            System.out.println("Using the Valkey on localhost:6379");
            return Optional.empty();
        }
        Optional<Path> binary = onPath("valkey-server");
        if (binary.isPresent()) {
            int port;
            try (ServerSocket socket = new ServerSocket(0)) {
                port = socket.getLocalPort();
            }
            Process process = new ProcessBuilder(binary.get().toString(), "--port", Integer.toString(port),
                    "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
            for (int i = 0; i < 100 && !answersPing(port); i++) {
                Thread.sleep(50);
            }
            System.setProperty("ratelimit.valkey.url", "redis://127.0.0.1:" + port);
            System.out.println("Started a throwaway valkey-server on port " + port + " (stopped on exit)");
            return Optional.of(process);
        }
        System.out.println("No Valkey found (set VALKEY_URL or install valkey-server): using the in-process "
                + "limiter, limits are per instance");
        return Optional.empty();
    }

    private static boolean answersPing(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = new byte[7];
            int n = in.read(reply);
            return n > 0 && new String(reply, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    private static Optional<Path> onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static String firstNonBlank(String... values) {
        for (String value : values) {
            if (value != null && !value.isBlank()) {
                return value.trim();
            }
        }
        return null;
    }

    private static String redact(String url) {
        return url.replaceAll("//([^:/@]*):[^@/]*@", "//$1:***@");
    }
}
