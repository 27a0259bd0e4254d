package dev.ratelimit.it;

import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.servlets.DefaultServlet;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's quick start works when copied: its {@code pom.xml}, {@code web.xml} and settings
 * file are the files of {@code examples/quickstart} (the reactor builds that WAR from them), and
 * the WAR, deployed on Tomcat 11 with a real Valkey, answers the README's transcript: five
 * requests in a minute with the fields it shows, then the 429 with its fields and problem body.
 * The times ({@code t}, {@code Retry-After}, the seconds in the body) depend on the moment and
 * are matched as numbers; every other character is the README's.
 */
@ExtendWith(ValkeyExtension.class)
class QuickStartTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path QUICKSTART = ROOT.resolve("examples/quickstart");

    private final ValkeyServer valkey;

    QuickStartTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void theReadmesFilesAreTheQuickStartProjectsFiles() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        assertThat(Files.readString(QUICKSTART.resolve("pom.xml"))).as("examples/quickstart/pom.xml")
                .isEqualTo(block(readme, "readme-dependencies"));
        assertThat(Files.readString(QUICKSTART.resolve("src/main/webapp/WEB-INF/web.xml"))).as("its web.xml")
                .isEqualTo(block(readme, "quickstart-web.xml"));
        assertThat(Files.readString(QUICKSTART.resolve("src/main/resources/META-INF/microprofile-config.properties")))
                .as("its settings").isEqualTo(block(readme, "quickstart-properties"));
        assertThat(Files.readString(QUICKSTART.resolve("src/main/webapp/index.html"))).as("its page")
                .isEqualTo(block(readme, "quickstart-page"));
        assertThat(block(readme, "quickstart-properties").lines()).as("the settings the README promises")
                .hasSize(4);
    }

    @Test
    void theQuickStartWarAnswersTheReadmesTranscriptOnTomcat() throws Exception {
        Path war = QUICKSTART.resolve("target/my-app.war");
        assertThat(war).as("the quick start's WAR (built by the examples/quickstart module)").exists();
        List<Exchange> transcript = transcript(Files.readString(ROOT.resolve("README.md")));
        assertThat(transcript).as("the README's exchanges").hasSize(2);
        valkey.flushAll();
        // The README's settings say localhost:6379; a system property overrides them, as the
        // environment variable RATELIMIT_VALKEY_URL would.
        System.setProperty("ratelimit.valkey.url", valkey.url());
        ExampleWar.PATIENT_TIMEOUTS.forEach(System::setProperty);
        Tomcat tomcat = EmbeddedTomcat.onLoopback();
        try {
            // Without Tomcat's default web.xml (see EmbeddedTomcat), the static content's servlet,
            // which that file would declare, is declared here.
            // As Tomcat deploys a WAR dropped into webapps/: at the path of its file's name.
            String path = "/" + war.getFileName().toString().replaceFirst("\\.war$", "");
            Context context = tomcat.addWebapp(path, war.toString());
            context.addLifecycleListener(event -> {
                if (org.apache.catalina.Lifecycle.CONFIGURE_START_EVENT.equals(event.getType())) {
                    Wrapper files = Tomcat.addServlet(context, "default", new DefaultServlet());
                    files.setLoadOnStartup(1);
                    context.addServletMappingDecoded("/", "default");
                    context.addWelcomeFile("index.html");
                }
            });
            tomcat.start();
            assertThat(context.getState().isAvailable()).as("the quick start WAR deployed").isTrue();
            String page = "http://127.0.0.1:" + EmbeddedTomcat.port(tomcat) + path + "/";
            assertThat(transcript.get(0).url()).as("the README's URL").endsWith(":8080" + path + "/");

            HttpResponse<String> first = get(page);
            transcript.get(0).assertMatches(first);
            for (int i = 2; i <= 5; i++) {
                assertThat(get(page).statusCode()).as("request %d of five a minute", i).isEqualTo(200);
            }
            transcript.get(1).assertMatches(get(page));
        } finally {
            tomcat.stop();
            tomcat.destroy();
            System.clearProperty("ratelimit.valkey.url");
            ExampleWar.PATIENT_TIMEOUTS.keySet().forEach(System::clearProperty);
        }
    }

    /** One exchange of the transcript: the URL curl asked, the status, the header lines shown, the body if any. */
    record Exchange(String url, int status, List<String> headers, String body) {

        void assertMatches(HttpResponse<String> response) {
            assertThat(response.statusCode()).as("status").isEqualTo(status);
            for (String line : headers) {
                String name = line.substring(0, line.indexOf(':'));
                String shown = line.substring(line.indexOf(':') + 1).strip();
                assertThat(response.headers().firstValue(name)).as("the README's %s", line)
                        .hasValueSatisfying(value -> assertThat(value).matches(timesAsNumbers(shown)));
            }
            if (!body.isEmpty()) {
                assertThat(response.body().strip()).as("the body").matches(timesAsNumbers(body));
            }
        }

        /**
         * The README's text as a pattern in which a number of seconds ({@code t=}, a
         * {@code Retry-After}, {@code retry in}, {@code "retryAfter":}) is any number.
         */
        private static String timesAsNumbers(String shown) {
            Matcher times = Pattern.compile("(?<=t=|retry in |\"retryAfter\":|^)\\d+(?=;|,| s|}|$)").matcher(shown);
            StringBuilder pattern = new StringBuilder();
            int at = 0;
            while (times.find()) {
                pattern.append(Pattern.quote(shown.substring(at, times.start()))).append("\\d+");
                at = times.end();
            }
            return pattern.append(Pattern.quote(shown.substring(at))).toString();
        }
    }

    /** The README's two exchanges: the first request's response and the sixth's. */
    private static List<Exchange> transcript(String readme) {
        String text = readme.substring(readme.indexOf("<!-- quickstart-transcript -->"),
                readme.indexOf("<!-- /quickstart-transcript -->"));
        Matcher blocks = Pattern.compile("```\\n(.*?)```", Pattern.DOTALL).matcher(text);
        List<Exchange> exchanges = new ArrayList<>();
        while (blocks.find()) {
            List<String> lines = blocks.group(1).lines().toList();
            int status = Integer.parseInt(lines.get(1).split(" ")[1]);
            List<String> headers = new ArrayList<>();
            int i = 2;
            for (; i < lines.size() && !lines.get(i).isEmpty() && !lines.get(i).equals("..."); i++) {
                headers.add(lines.get(i));
            }
            String body = String.join("\n", lines.subList(Math.min(i + 1, lines.size()), lines.size())).strip();
            exchanges.add(new Exchange(lines.get(0).substring(lines.get(0).lastIndexOf(' ') + 1), status, headers, body));
        }
        return exchanges;
    }

    private static String block(String readme, String marker) {
        Matcher m = Pattern.compile("<!-- " + Pattern.quote(marker) + " -->\\s*```\\w*\\n(.*?)```\\s*<!-- /"
                + Pattern.quote(marker) + " -->", Pattern.DOTALL).matcher(readme);
        assertThat(m.find()).as("the README's <!-- %s --> block", marker).isTrue();
        return m.group(1);
    }

    private static HttpResponse<String> get(String uri) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
