package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.EditableConfigSource;
import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @RateLimited}'s first call, which starts the limits, under faults: Valkey paused, the
 * sentinels unreachable, the settings edited since the deployment checked the annotations.
 */
@ExtendWith(ValkeyExtension.class)
class LazyStartFaultTest {

    /** Far above any decision's worst case here (a 300 ms reply timeout): a call stuck, not a slow box. */
    private static final long BOUND_MILLIS = 8_000;

    private final ValkeyServer valkey;

    LazyStartFaultTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings(String policy, String... more) {
        Map<String, String> settings = JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "5", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global",
                "ratelimit.rule.api.on-failure", policy, "ratelimit.valkey.timeout", "300ms",
                "ratelimit.deny-cache.enabled", "false");
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    private static int allowedOf(JakartaApp app, int tries) throws Exception {
        int allowed = 0;
        for (int i = 0; i < tries; i++) {
            if (app.get("/p").statusCode() == 200) {
                allowed++;
            }
        }
        return allowed;
    }

    @Test
    void aFirstCallWhileValkeyIsPausedIsDecidedByThePolicyThenValkeyCountsAgain() throws Exception {
        for (String policy : new String[] {"open", "closed"}) {
            valkey.flushAll();
            try (JakartaApp app = JakartaApp.start(settings(policy), false, EdgeResources.Annotated.class)) {
                valkey.pause(Duration.ofSeconds(2));
                long start = System.nanoTime();
                HttpResponse<String> first = app.get("/p");
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertThat(first.statusCode()).as(policy).isEqualTo("open".equals(policy) ? 200 : 503);
                assertThat(millis).as(policy + ": the first call's time").isLessThan(BOUND_MILLIS);
                Thread.sleep(2_500);
                // Back: Valkey counts (the paused call may or may not have reached it).
                assertThat(allowedOf(app, 7)).as(policy + " after Valkey is back").isBetween(4, 5);
            }
        }
    }

    /**
     * Valkey down (its process gone, the port refusing) at the first call of a REST and of a CDI
     * method: each is answered by the rule's policy, quickly; Valkey back, the limit applies again.
     */
    @Test
    void aFirstCallWhileValkeyIsDownIsDecidedByThePolicyThenTheLimitAppliesAgain() throws Exception {
        assertThat(valkey.restartable()).as("this test stops Valkey: it needs a server of its own").isTrue();
        for (String policy : new String[] {"open", "closed", "local"}) {
            valkey.flushAll();
            try (JakartaApp app = JakartaApp.start(settings(policy), false, EdgeResources.Annotated.class);
                 WeldContainer weld = weld(app, ApiService.class)) {
                ApiService api = weld.select(ApiService.class).get();
                valkey.stop();
                try {
                    long start = System.nanoTime();
                    HttpResponse<String> first = app.get("/p");
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    assertThat(first.statusCode()).as(policy).isEqualTo("closed".equals(policy) ? 503 : 200);
                    assertThat(millis).as(policy + ": the first call's time").isLessThan(BOUND_MILLIS);
                    if ("closed".equals(policy)) {
                        assertThatThrownBy(api::call).isInstanceOf(RateLimitExceededException.class);
                    } else {
                        assertThat(api.call()).as(policy).isEqualTo("ok");
                    }
                } finally {
                    valkey.start();
                }
                int status = 0;
                for (int i = 0; i < 20 && status != 429; i++) {
                    status = app.get("/p").statusCode();
                    if (status != 429) {
                        Thread.sleep(50);
                    }
                }
                assertThat(status).as(policy + ": the limit of 5 applies again once Valkey is back").isEqualTo(429);
            }
        }
    }

    /**
     * No sentinel answers when an annotated method's limits start, at the first call after the
     * deployment: that call, and each one after it, is answered as the rule's {@code on-failure}
     * policy says, not failed, while a thread asks the sentinels again.
     */
    @Test
    void aFirstCallWhileNoSentinelAnswersIsAnsweredByThePolicy() throws Exception {
        Map<String, String> settings = settings("open", "ratelimit.valkey.sentinel.master", "primary",
                "ratelimit.valkey.sentinel.nodes", "127.0.0.1:" + ValkeyServer.freePort(),
                "ratelimit.valkey.connect-timeout", "300ms");
        try (JakartaApp app = JakartaApp.start(settings, false, EdgeResources.Annotated.class)) {
            HttpResponse<String> first = app.get("/p");
            assertThat(first.statusCode()).as("open policy; body: " + first.body()).isEqualTo(200);
        }
    }

    /**
     * As above with a sentinel that accepts connections and never answers (a hung host): the
     * first calls, made at once, are each answered by the policy in bounded time, not one
     * after another each waiting out its own attempt to reach the sentinel.
     */
    @Test
    void firstCallsAtOnceWhileTheSentinelHangsAreAnsweredByThePolicy() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                List<Socket> held = new ArrayList<>();
                while (!silent.isClosed()) {
                    try {
                        held.add(silent.accept());
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "silent-sentinel");
            acceptor.setDaemon(true);
            acceptor.start();
            Map<String, String> settings = settings("open", "ratelimit.valkey.sentinel.master", "primary",
                    "ratelimit.valkey.sentinel.nodes", "127.0.0.1:" + silent.getLocalPort(),
                    "ratelimit.valkey.connect-timeout", "300ms");
            int calls = 6;
            ExecutorService pool = Executors.newFixedThreadPool(calls);
            try (JakartaApp app = JakartaApp.start(settings, false, EdgeResources.Annotated.class)) {
                List<Future<String>> answers = new ArrayList<>();
                for (int i = 0; i < calls; i++) {
                    answers.add(pool.submit(() -> {
                        long start = System.nanoTime();
                        int status = app.get("/p").statusCode();
                        return status + " in " + (System.nanoTime() - start) / 1_000_000 + " ms";
                    }));
                }
                List<String> seen = new ArrayList<>();
                for (Future<String> answer : answers) {
                    seen.add(answer.get(60, TimeUnit.SECONDS));
                }
                assertThat(seen).as("open policy: status and time of each call").allMatch(a -> a.startsWith("200 "));
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** Settings with a rule {@code login} keyed by the form's user name, editable while the app runs. */
    private EditableConfigSource loginSource() {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JakartaApp.settings(valkey.url(), "ratelimit.rules", "login,other",
                "ratelimit.rule.login.scope", "method",
                "ratelimit.rule.login.limit", "2", "ratelimit.rule.login.window", "1h",
                "ratelimit.rule.login.key", "param:username",
                "ratelimit.rule.other.limit", "5", "ratelimit.rule.other.window", "1h",
                "ratelimit.rule.reset.scope", "method",
                "ratelimit.rule.reset.limit", "3", "ratelimit.rule.reset.window", "1h",
                "ratelimit.rule.reset.key", "param:accountId",
                "ratelimit.rule.daily.scope", "method",
                "ratelimit.rule.daily.limit", "4", "ratelimit.rule.daily.window", "1d",
                "ratelimit.rule.welcome.scope", "method",
                "ratelimit.rule.welcome.limit", "1", "ratelimit.rule.welcome.window", "1h",
                "ratelimit.rule.welcome.key", "param:0"));
        return source;
    }

    /**
     * The deployment checked the annotations; the settings changed before the first call, which
     * starts the limits: the rule the method names is gone. The call is not let through
     * unlimited; the error names the method and the rule; once the settings name it again,
     * calls are limited by it.
     */
    @Test
    void aRuleGoneBetweenTheDeploymentAndTheFirstCallFailsTheCallNamingMethodAndRule() throws Exception {
        EditableConfigSource source = loginSource();
        source.values.put("ratelimit.rules", "login,other,reset,daily,welcome");
        try (JakartaApp app = JakartaApp.start(source, false, Resources.Login.class);
             WeldContainer weld = weld(app, MailService.class)) {
            source.values.put("ratelimit.rules", "other,daily,welcome");
            HttpResponse<String> rest = app.postForm("/login", "username=alice&password=secret");
            assertThat(rest.statusCode()).as(rest.body()).isEqualTo(500);
            MailService mails = weld.select(MailService.class).get();
            assertThatThrownBy(() -> mails.sendReset(1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("@RateLimited(\"reset\") on " + MailService.class.getName() + ".")
                    .hasMessageContaining("names no rule of ratelimit.rules [other, daily, welcome]");
            assertThat(mails.sent()).as("not run unlimited").isEmpty();
        }
    }
}
