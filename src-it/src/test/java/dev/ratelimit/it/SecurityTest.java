package dev.ratelimit.it;

import dev.ratelimit.Algorithm;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A limit that can be dodged, or turned against other users, is worse than none. */
@ExtendWith(ValkeyExtension.class)
class SecurityTest {

    /** The least-privilege ACL of the README: the limiter's key prefix, the commands it uses. */
    static final String LIMITER_ACL = "on resetkeys ~rl:* resetchannels -@all +fcall +function|load +del +time +get +set "
            + "+pexpire +zadd +zcard +zcount +zrangebyscore +zrevrange +zrevrangebyscore +zremrangebyscore "
            + "+zremrangebyrank +zrem";

    private final ValkeyServer valkey;

    SecurityTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings(String... pairs) {
        return JettyApp.settings(valkey.url(), pairs);
    }

    @Test
    void hostileKeyValuesGiveBoundedSafeKeysThatNeverCollide() throws Exception {
        try (JettyApp app = JettyApp.start(settings("ratelimit.rules", "pair",
                "ratelimit.rule.pair.limit", "1", "ratelimit.rule.pair.window", "1m",
                "ratelimit.rule.pair.key", "param:a+param:b"));
             Jedis inspect = valkey.connect()) {
            // Each of these is a different client: none may be counted under another's key.
            List<String[]> clients = List.of(
                    new String[] {"x+param.b:y", "z"}, new String[] {"x", "y+param.b:z"},
                    new String[] {"x", "y"}, new String[] {"{x}", "y"}, new String[] {"x}", "{y"},
                    new String[] {"*", "*"}, new String[] {"a b", "c"}, new String[] {"a\u0000b", "c"},
                    new String[] {"a\r\nb", "c"}, new String[] {"ключ", "ü"}, new String[] {"#abc", "d"},
                    new String[] {"x".repeat(100_000), "y"}, new String[] {"x".repeat(100_001), "y"});
            for (String[] client : clients) {
                String form = "a=" + URLEncoder.encode(client[0], StandardCharsets.UTF_8)
                        + "&b=" + URLEncoder.encode(client[1], StandardCharsets.UTF_8);
                assertThat(app.postForm("/", form).statusCode()).as("first request of %s", (Object) client)
                        .isEqualTo(200);
            }
            Set<String> keys = inspect.keys("*");
            assertThat(keys).hasSize(clients.size()).allSatisfy(key -> {
                assertThat(key).hasSizeLessThanOrEqualTo(200).matches("rl:v1:pair:sliding-window-counter:\\{[A-Za-z0-9:._@/=%,#+-]+}");
            });
        }
    }

    @Test
    void pathTricksCannotDodgeARuleAndNothingIsAnsweredWith500() throws Exception {
        try (JettyApp app = JettyApp.start(settings("ratelimit.rules", "login",
                "ratelimit.rule.login.match", "/login", "ratelimit.rule.login.limit", "1",
                "ratelimit.rule.login.window", "1m",
                // Valkey is emptied between tricks; a remembered rejection would hide what Valkey says.
                "ratelimit.deny-cache.enabled", "false"))) {
            List<String> tricks = List.of("/login", "/api/..;/login", "/%2e%2e/login", "/x/%2e%2e/login",
                    "//login", "/./login", "/login;jsessionid=1", "/login;x=y", "/%6cogin", "/LOGIN",
                    "/login/", "/api%2f..%2flogin", "/login%2f", "/login%00", "/login?x=1", "/login#x");
            for (String trick : tricks) {
                valkey.flushAll();
                assertThat(rawGet(app.port(), "/login")).as("the first login").startsWith("HTTP/1.1 200");
                String response = rawGet(app.port(), trick);
                System.out.printf("path trick %-22s -> %s%n", trick, response.lines().findFirst().orElse(""));
                assertThat(response).as(trick).doesNotStartWith("HTTP/1.1 500");
                boolean reachedLogin = response.startsWith("HTTP/1.1 200") && response.endsWith("login");
                assertThat(reachedLogin).as("%s reached the login servlet without being counted: %s", trick, response)
                        .isFalse();
            }
        }
    }

    @Test
    void malformedForwardingHeadersNeverMakeA500() throws Exception {
        Map<String, String> m = settings("ratelimit.rules", "ip", "ratelimit.rule.ip.limit", "1000",
                "ratelimit.rule.ip.window", "1m", "ratelimit.trusted-proxies", "127.0.0.1/32, ::1");
        for (String header : List.of("X-Forwarded-For", "Forwarded")) {
            m.put("ratelimit.client-ip-header", header);
            try (JettyApp app = JettyApp.start(m)) {
                for (String value : List.of("", ",,,", "\"", "for=\"", "for=\"[::1", "for=[::1]:x", "unknown",
                        "1.2.3.4".repeat(2_000), "fe80::1%25eth0", "999.1.1.1, ::ffff:1.2.3.4", "for=_x;by=_y")) {
                    HttpResponse<String> response = app.get("/", header, value.isEmpty() ? " " : value);
                    assertThat(response.statusCode()).as("%s: %s", header, value).isNotEqualTo(500);
                }
            }
        }
    }

    @Test
    void anAclUserWithOnlyTheLimitersRightsCanRunEveryAlgorithmAndNothingElse() {
        try (Jedis admin = valkey.connect()) {
            admin.aclSetUser("limiter", (">s3cret-pw " + LIMITER_ACL).split(" "));
            try {
                String url = valkey.url().replace("redis://", "redis://limiter:s3cret-pw@");
                try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder()
                        .settings(ValkeySettings.of(url).withSocketTimeout(Duration.ofSeconds(2))).build()) {
                    for (Algorithm algorithm : Algorithm.values()) {
                        Rule rule = Rule.of("acl-" + algorithm.id(), algorithm, 2, Duration.ofMinutes(1));
                        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
                        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
                        assertThat(limiter.acquire(rule, "k").allowed()).isFalse();
                        limiter.reset(rule, "k");
                        assertThat(limiter.acquire(rule, "k").allowed()).isTrue();
                        // Giving back, as count-when and refund-when do after the response.
                        assertThat(limiter.reserve(rule, "k").cancel()).containsExactly(rule.name());
                    }
                    // The server clock (TIME) too.
                    assertThat(limiter.peek(Rule.of("acl", Algorithm.GCRA, 1, Duration.ofSeconds(1)), "k", 1).allowed())
                            .isTrue();
                }
                try (Jedis asLimiter = new Jedis(valkey.url().replace("redis://", "redis://limiter:s3cret-pw@"))) {
                    assertThatThrownBy(() -> asLimiter.get("session:123")).isInstanceOf(JedisDataException.class)
                            .hasMessageContaining("NOPERM");
                    assertThatThrownBy(asLimiter::flushAll).isInstanceOf(JedisDataException.class)
                            .hasMessageContaining("NOPERM");
                    assertThatThrownBy(() -> asLimiter.keys("*")).isInstanceOf(JedisDataException.class)
                            .hasMessageContaining("NOPERM");
                }
                String wrong = valkey.url().replace("redis://", "redis://limiter:wrong-pw-123@");
                try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(wrong)).build()) {
                    assertThatThrownBy(() -> limiter.acquire(Rule.of("x", Algorithm.GCRA, 1, Duration.ofSeconds(1)), "k"))
                            .isInstanceOf(RateLimitException.class)
                            .hasMessageNotContaining("wrong-pw-123")
                            .satisfies(e -> assertThat(String.valueOf(e.getCause())).doesNotContain("wrong-pw-123"));
                }
            } finally {
                admin.aclDelUser("limiter");
            }
        }
    }

    @Test
    void tlsWithItsOwnCaWorksAndTheHostNameIsVerified(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path ca = dir.resolve("ca.crt");
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
                "-keyout", "ca.key", "-out", "ca.crt");
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key",
                "-out", "server.csr");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=DNS:localhost\n");
        openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", "server.crt");

        int tlsPort = ValkeyServer.freePort();
        try (ValkeyServer tls = ValkeyServer.startProcess(List.of("--tls-port", Integer.toString(tlsPort),
                "--tls-cert-file", cert.toString(), "--tls-key-file", key.toString(),
                "--tls-ca-cert-file", ca.toString(), "--tls-auth-clients", "no"))) {
            Rule rule = Rule.of("tls", Algorithm.TOKEN_BUCKET, 2, Duration.ofMinutes(1));
            ValkeySettings settings = ValkeySettings.of("rediss://localhost:" + tlsPort)
                    .withSocketTimeout(Duration.ofSeconds(2)).withConnectTimeout(Duration.ofSeconds(2));
            try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(settings.withTlsCaFile(ca)).build()) {
                assertThat(limiter.acquire(rule, "k").remaining()).isEqualTo(1);
            }
            // The JVM's own trust store does not know this CA.
            try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(settings).build()) {
                assertThatThrownBy(() -> limiter.acquire(rule, "k")).isInstanceOf(RateLimitException.class);
            }
            // The certificate names localhost, not 127.0.0.1: the name is checked, not just the CA.
            ValkeySettings byAddress = ValkeySettings.of("rediss://127.0.0.1:" + tlsPort)
                    .withSocketTimeout(Duration.ofSeconds(2)).withTlsCaFile(ca);
            try (ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(byAddress).build()) {
                assertThatThrownBy(() -> limiter.acquire(rule, "k")).isInstanceOf(RateLimitException.class);
            }
        }
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("openssl %s: %s", List.of(args), output).isZero();
    }

    /** A GET sent byte for byte, so no client library normalises the path first. */
    private static String rawGet(int port, String target) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
