package dev.ratelimit.it;

import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit explain}, the real runnable JAR in a process of its own, against what the
 * filter really does: the same settings serve a real Jetty on a real Valkey, the same request
 * goes over HTTP, and the Valkey keys it created must be exactly the ones explain named (behind
 * a trusted proxy, with a principal, a header and a parameter key, a value hashed, an IPv6
 * client counted per /64, a plan header); a request no rule counts creates none; an untrusted
 * peer's forwarding and plan headers are ignored by both. Bad usage exits 2, a broken file 1.
 */
@ExtendWith(ValkeyExtension.class)
class CliExplainTest {

    private final ValkeyServer valkey;

    @TempDir
    Path dir;

    CliExplainTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private record Run(int status, String out, String err) {
    }

    /**
     * Four algorithms, each key kind, a plan header; windows of hours (one a calendar day), limits no
     * test reaches.
     */
    private Map<String, String> settings() {
        return JettyApp.settings(valkey.url(),
                "ratelimit.trusted-proxies", "127.0.0.1/32",
                "ratelimit.key-prefix", "explain",
                "ratelimit.rules", "api,user,combo,keyed,login",
                "ratelimit.rule.api.match", "/api/*",
                "ratelimit.rule.api.algorithm", "token-bucket", "ratelimit.rule.api.limit", "100",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "principal-or-ip",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.pro.limit", "500",
                "ratelimit.rule.user.match", "/api/*", "ratelimit.rule.user.exclude", "/api/public/*",
                "ratelimit.rule.user.algorithm", "fixed-window", "ratelimit.rule.user.limit", "100",
                "ratelimit.rule.user.window", "calendar-day", "ratelimit.rule.user.time-zone", "Europe/Berlin",
                "ratelimit.rule.user.key", "principal",
                "ratelimit.rule.combo.match", "/api/*",
                "ratelimit.rule.combo.algorithm", "gcra", "ratelimit.rule.combo.limit", "100",
                "ratelimit.rule.combo.window", "1h", "ratelimit.rule.combo.key", "ip+path",
                "ratelimit.rule.keyed.match", "/keyed",
                "ratelimit.rule.keyed.algorithm", "sliding-window-counter", "ratelimit.rule.keyed.limit", "100",
                "ratelimit.rule.keyed.window", "1h", "ratelimit.rule.keyed.key", "header:X-Api-Key",
                "ratelimit.rule.login.match", "/login", "ratelimit.rule.login.methods", "POST",
                "ratelimit.rule.login.algorithm", "sliding-log", "ratelimit.rule.login.limit", "100",
                "ratelimit.rule.login.window", "1h", "ratelimit.rule.login.key", "param:username",
                "ratelimit.rule.login.lowercase-key", "true",
                "ratelimit.deny-cache.enabled", "false");
    }

    @Test
    void behindATrustedProxyTheForwardedClientAndThePlanHeaderAreWhatTheFilterUses() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            String policy = app.get("/api/items", "X-Forwarded-For", "198.51.100.1, 203.0.113.9", "X-Plan", "pro")
                    .headers().firstValue("RateLimit-Policy").orElse("");
            JSONObject explained = explainJson("GET", "/api/items", "-H", "X-Forwarded-For: 198.51.100.1, 203.0.113.9",
                    "-H", "X-Plan: pro");
            assertThat(valkeyKeys()).as("the keys the request created").isEqualTo(namedKeys(explained));
            JSONObject api = rule(explained, "api");
            assertThat(api.getString("clientAddress")).isEqualTo("203.0.113.9");
            assertThat(api.getString("key")).isEqualTo("ip:203.0.113.9");
            assertThat(api.getString("valkeyKey")).isEqualTo("explain:api:token-bucket:{ip:203.0.113.9}");
            assertThat(api.getJSONObject("plan").getString("applied")).isEqualTo("pro");
            assertThat(api.getJSONObject("limit").getLong("limit")).isEqualTo(500);
            assertThat(policy).as("the filter held the caller to the plan too").contains("\"api\";q=500");
            assertThat(rule(explained, "combo").getBoolean("keyHashed")).as("ip+path: '+' is hashed in the Valkey key")
                    .isTrue();
            assertThat(rule(explained, "user").getString("reason")).contains("no principal");
            assertThat(rule(explained, "keyed").getString("reason")).contains("/api/items matches none of [/keyed]");
            assertThat(rule(explained, "login").getString("reason")).contains("method GET is not one of POST");
        }
    }

    @Test
    void aPrincipalIsTheKeyOfItsRulesAndAnExcludedPathIsSaid() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            app.get("/api/orders", "X-Test-User", "alice");
            JSONObject explained = explainJson("GET", "/api/orders", "--principal", "alice");
            assertThat(valkeyKeys()).isEqualTo(namedKeys(explained));
            assertThat(rule(explained, "api").getString("key")).isEqualTo("user:alice");
            assertThat(rule(explained, "api").isNull("clientAddress")).as("its key did not use the address").isTrue();
            assertThat(rule(explained, "user").getString("valkeyKey")).isEqualTo("explain:user:fixed-window:{user:alice}");
            JSONObject daily = rule(explained, "user").getJSONObject("limit");
            assertThat(daily.getString("window")).as("a calendar window by its name and zone").isEqualTo("calendar-day");
            assertThat(daily.getString("timeZone")).isEqualTo("Europe/Berlin");
            assertThat(rule(explained, "api").getJSONObject("plan").getString("note")).contains("none given");

            valkey.flushAll();
            app.get("/api/public/news", "X-Test-User", "alice");
            JSONObject excluded = explainJson("GET", "/api/public/news", "--principal", "alice");
            assertThat(valkeyKeys()).isEqualTo(namedKeys(excluded));
            assertThat(rule(excluded, "user").getString("reason")).contains("excluded by /api/public/*");
        }
    }

    @Test
    void aHeaderValueThatCannotBeKeptAsIsIsHashedAsTheFilterHashesIt() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            app.get("/keyed", "X-Api-Key", "key with {braces} and spaces");
            JSONObject explained = explainJson("GET", "/keyed", "-H", "X-Api-Key: key with {braces} and spaces");
            assertThat(valkeyKeys()).isEqualTo(namedKeys(explained)).hasSize(1);
            JSONObject keyed = rule(explained, "keyed");
            assertThat(keyed.getString("key")).startsWith("header.x-api-key:#");
            assertThat(keyed.getBoolean("valueHashed")).isTrue();
        }
    }

    @Test
    void aLowerCasedFormParameterIsTheKey() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            app.postForm("/login", "username=Alice");
            JSONObject explained = explainJson("POST", "/login", "--param", "username=Alice");
            assertThat(valkeyKeys()).isEqualTo(namedKeys(explained)).hasSize(1);
            assertThat(rule(explained, "login").getString("valkeyKey")).isEqualTo("explain:login:sliding-log:{param.username:alice}");
            // The same parameter in the query, as the path given to explain.
            assertThat(rule(explainJson("POST", "/login?username=Alice"), "login").getString("key"))
                    .isEqualTo("param.username:alice");
        }
    }

    @Test
    void anIpv6ClientIsCountedPerNetworkOf64Bits() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            app.get("/api/items", "X-Forwarded-For", "2001:db8:1:2::7");
            // Header names in any case, as HTTP has them.
            JSONObject explained = explainJson("GET", "/api/items", "-H", "x-forwarded-for: 2001:db8:1:2::7");
            assertThat(valkeyKeys()).isEqualTo(namedKeys(explained));
            assertThat(rule(explained, "api").getString("valkeyKey")).isEqualTo("explain:api:token-bucket:{ip:2001:db8:1:2::/64}");
            assertThat(explained.getJSONObject("request").getString("clientAddress")).isEqualTo("2001:db8:1:2::/64");
        }
    }

    @Test
    void aRequestNoRuleCountsCreatesNoKeyAndEveryRuleSaysWhyNot() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            app.get("/elsewhere");
            JSONObject explained = explainJson("GET", "/elsewhere");
            assertThat(valkeyKeys()).isEmpty();
            assertThat(namedKeys(explained)).isEmpty();
            for (Object rule : explained.getJSONArray("rules")) {
                assertThat(((JSONObject) rule).getBoolean("matches")).isFalse();
                assertThat(((JSONObject) rule).getString("reason")).isNotBlank();
            }
            Run text = explain(List.of("GET", "/elsewhere"));
            assertThat(text.status()).as(text.err()).isZero();
            assertThat(text.out()).contains("api: no match: path /elsewhere matches none of [/api/*]")
                    .contains("login: no match: method GET is not one of POST");
        }
    }

    @Test
    void anUntrustedPeersForwardingAndPlanHeadersAreIgnoredByBoth() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            String head = getFrom("127.0.0.2", app.port(), "/api/items",
                    Map.of("X-Forwarded-For", "203.0.113.9", "X-Plan", "pro"));
            assertThat(head).startsWith("HTTP/1.1 200");
            JSONObject explained = explainJson("GET", "/api/items", "--remote-addr", "127.0.0.2",
                    "-H", "X-Forwarded-For: 203.0.113.9", "-H", "X-Plan: pro");
            assertThat(valkeyKeys()).isEqualTo(namedKeys(explained));
            assertThat(explained.getJSONObject("request").getBoolean("trustedPeer")).isFalse();
            JSONObject api = rule(explained, "api");
            assertThat(api.getString("key")).isEqualTo("ip:127.0.0.2");
            assertThat(api.getJSONObject("plan").isNull("applied")).isTrue();
            assertThat(api.getJSONObject("plan").getString("note")).contains("not a trusted proxy");
            assertThat(head.toLowerCase()).as("the filter held it to the rule's own limit").contains("\"api\";q=100");
            Run text = explain(List.of("GET", "/api/items", "--remote-addr", "127.0.0.2", "-H", "X-Forwarded-For: 203.0.113.9"));
            assertThat(text.out()).contains("from 127.0.0.2 (not a trusted proxy: forwarding headers ignored), client 127.0.0.2");
        }
    }

    /**
     * A path pasted as sent (an access log's): explain reads it as the container does, so the keys it
     * names are the keys the request created; a path the container answers 400 creates none, and
     * explain says so as bad usage. With --context-path the whole path is pasted as is.
     */
    @Test
    void aPathAsSentIsReadAsTheContainerReadsIt() throws Exception {
        try (JettyApp app = JettyApp.start(settings())) {
            for (String target : List.of("/api/A%20b", "/api/items;jsessionid=1?page=2", "/api;v=1/items",
                    "/api/x/../items", "/api/./items", "/api/caf%C3%A9", "/api/a%3Bb")) {
                valkey.flushAll();
                assertThat(getFrom("127.0.0.1", app.port(), target, Map.of())).as(target).startsWith("HTTP/1.1 200");
                assertThat(valkeyKeys()).as(target).isEqualTo(namedKeys(explainJson("GET", target))).isNotEmpty();
                assertThat(valkeyKeys()).as(target + " under a context path")
                        .isEqualTo(namedKeys(explainJson("GET", "/shop" + target, "--context-path", "/shop")));
            }
            assertThat(rule(explainJson("GET", "/api/A%20b"), "combo").getString("key")).as("the space decoded, then hashed")
                    .startsWith("ip:127.0.0.1+path:#");
            for (String target : List.of("/api/a%2Fb", "/api/a%5Cb", "/api/%2e%2e/x", "/api/..;/x", "/api/a%00b",
                    "/api/a%zzb", "/api/a%E2%82", "/../api/x", "/api/;v=1/x")) {
                valkey.flushAll();
                assertThat(getFrom("127.0.0.1", app.port(), target, Map.of())).as(target).startsWith("HTTP/1.1 400");
                assertThat(valkeyKeys()).as(target).isEmpty();
                Run run = explain(List.of("GET", target));
                assertThat(run.status()).as(target + ": " + run.err()).isEqualTo(2);
                assertThat(run.err()).as(target).contains("400 Bad Request").doesNotContain("\tat ");
            }
        }
    }

    /**
     * HEAD does GET's work (HttpServlet.doHead runs doGet): a rule of GET counts it, in the filter
     * and in explain alike.
     */
    @Test
    void aHeadRequestIsCountedByARuleOfGet() throws Exception {
        Map<String, String> settings = settings();
        settings.put("ratelimit.rule.login.methods", "GET");
        try (JettyApp app = JettyApp.start(settings)) {
            String head = requestFrom("HEAD", "127.0.0.1", app.port(), "/login?username=Alice", Map.of());
            assertThat(head).startsWith("HTTP/1.1 200");
            Run run = cli(List.of("explain", file(settings).toString(), "HEAD", "/login?username=Alice", "--json"));
            assertThat(run.status()).as(run.err()).isZero();
            JSONObject explained = new JSONObject(run.out());
            assertThat(rule(explained, "login").getBoolean("matches")).as(run.out()).isTrue();
            assertThat(valkeyKeys()).isEqualTo(namedKeys(explained))
                    .contains("explain:login:sliding-log:{param.username:alice}");
        }
    }

    @Test
    void badUsageExits2() throws Exception {
        Path file = file(settings());
        for (List<String> args : List.of(List.of("explain", file.toString(), "GET"),
                List.of("explain", file.toString(), "GET", "no-slash"),
                List.of("explain", file.toString(), "GET", "/", "-H", "no colon"),
                List.of("explain", file.toString(), "GET", "/", "--role", "admin"),
                List.of("explain", file.toString(), "GET", "/", "--no-such-option"),
                List.of("explain", file.toString(), "GET", "/other/x", "--context-path", "/shop"),
                List.of("explain", file.toString(), "GET", "/shop", "--context-path", "/shop"),
                List.of("explain", file.toString(), "GET", "/shop/x", "--context-path", "shop"))) {
            Run run = cli(args);
            assertThat(run.status()).as(String.join(" ", args) + ": " + run.err()).isEqualTo(2);
            assertThat(run.err()).doesNotContain("\tat ");
        }
    }

    @Test
    void aBrokenOrMissingFileExits1InOneLinePerProblem() throws Exception {
        Map<String, String> broken = settings();
        broken.put("ratelimit.rule.api.limit", "-3");
        broken.put("ratelimit.rule.login.key", "param:");
        Run run = cli(List.of("explain", file(broken).toString(), "GET", "/api/items"));
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.err()).contains("ratelimit.rule.api.limit='-3'").contains("ratelimit.rule.login.key")
                .doesNotContain("\tat ");
        Run missing = cli(List.of("explain", dir.resolve("nowhere.properties").toString(), "GET", "/"));
        assertThat(missing.status()).isEqualTo(1);
        assertThat(missing.err().strip()).startsWith("ratelimit: cannot read the settings file").doesNotContain("\n");
    }

    /** Every key in the test's Valkey. */
    private Set<String> valkeyKeys() {
        try (Jedis jedis = valkey.connect()) {
            return new TreeSet<>(jedis.keys("*"));
        }
    }

    /** The Valkey keys explain named, one per rule that counts the request. */
    private static Set<String> namedKeys(JSONObject explained) {
        Set<String> keys = new TreeSet<>();
        JSONArray rules = explained.getJSONArray("rules");
        for (int i = 0; i < rules.length(); i++) {
            if (rules.getJSONObject(i).getBoolean("matches")) {
                keys.add(rules.getJSONObject(i).getString("valkeyKey"));
            }
        }
        return keys;
    }

    private static JSONObject rule(JSONObject explained, String name) {
        JSONArray rules = explained.getJSONArray("rules");
        for (int i = 0; i < rules.length(); i++) {
            if (rules.getJSONObject(i).getString("rule").equals(name)) {
                return rules.getJSONObject(i);
            }
        }
        throw new AssertionError("no rule " + name + " in " + explained);
    }

    private JSONObject explainJson(String... request) throws Exception {
        List<String> args = new ArrayList<>(List.of(request));
        args.add("--json");
        Run run = explain(args);
        assertThat(run.status()).as(run.err()).isZero();
        return new JSONObject(run.out());
    }

    private Run explain(List<String> request) throws Exception {
        List<String> args = new ArrayList<>(List.of("explain", file(settings()).toString()));
        args.addAll(request);
        return cli(args);
    }

    private Path file(Map<String, String> settings) throws IOException {
        StringBuilder text = new StringBuilder();
        new TreeSet<>(settings.keySet()).forEach(name -> text.append(name).append('=').append(settings.get(name)).append('\n'));
        Path file = dir.resolve("microprofile-config.properties");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    private Run cli(List<String> args) throws Exception {
        Path jar = Path.of(System.getProperty("cli.jar", "../cli/target/ratelimit-cli.jar"));
        assertThat(jar).as("the command's JAR, built before these tests").isRegularFile();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", jar.toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(name -> name.startsWith("RATELIMIT_"));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the command ended").isTrue();
        return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** A GET sent from a given local address (127.0.0.2 is not the trusted proxy); the response head. */
    private static String getFrom(String from, int port, String target, Map<String, String> headers) throws IOException {
        return requestFrom("GET", from, port, target, headers);
    }

    /** A request of any method sent from a given local address; the response head. */
    private static String requestFrom(String method, String from, int port, String target, Map<String, String> headers)
            throws IOException {
        try (Socket socket = new Socket()) {
            socket.bind(new InetSocketAddress(from, 0));
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(20_000);
            StringBuilder request = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            new HashMap<>(headers).forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
            request.append("Connection: close\r\n\r\n");
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            int end = response.indexOf("\r\n\r\n");
            return end < 0 ? response : response.substring(0, end);
        }
    }
}
