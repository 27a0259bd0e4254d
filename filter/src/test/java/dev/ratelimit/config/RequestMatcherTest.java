package dev.ratelimit.config;

import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The matcher the filter and {@code ratelimit explain} share: why a rule does not apply (in the
 * order the filter tests), which key part a request lacks, and a plan header read only from a
 * trusted proxy.
 */
class RequestMatcherTest {

    /** A request with headers, a principal or not, from a peer. */
    private record Request(String method, String path, Map<String, String> headerValues, String principal,
                           String remoteAddr) implements RequestView {
        @Override
        public String header(String name) {
            return headerValues.get(name);
        }

        @Override
        public Enumeration<String> headers(String name) {
            String value = headerValues.get(name);
            return Collections.enumeration(value == null ? List.of() : List.of(value));
        }

        @Override
        public String parameter(String name) {
            return null;
        }

        @Override
        public boolean isUserInRole(String role) {
            return false;
        }

        @Override
        public Object attribute(String name) {
            return null;
        }
    }

    private static final FilterSettings SETTINGS = SettingsReader.read(new MapSettingsSource(Map.ofEntries(
            Map.entry("ratelimit.trusted-proxies", "10.0.0.0/8"),
            Map.entry("ratelimit.rules", "api"),
            Map.entry("ratelimit.rule.api.match", "/api/*"),
            Map.entry("ratelimit.rule.api.exclude", "/api/health"),
            Map.entry("ratelimit.rule.api.methods", "GET"),
            Map.entry("ratelimit.rule.api.algorithm", "fixed-window"),
            Map.entry("ratelimit.rule.api.limit", "10"),
            Map.entry("ratelimit.rule.api.window", "1m"),
            Map.entry("ratelimit.rule.api.key", "ip+principal"),
            Map.entry("ratelimit.rule.api.plan", "header:X-Plan"),
            Map.entry("ratelimit.rule.api.plan.pro.limit", "100"))));
    private static final RuleSettings API = SETTINGS.rules().get(0);
    private final RequestMatcher matcher = RequestMatcher.of(SETTINGS);

    @Test
    void theMethodIsTestedFirstThenTheExcludesThenTheMatches() {
        assertThat(API.fit("POST", "/api/health")).isEqualTo(RuleSettings.Fit.OTHER_METHOD);
        assertThat(API.fit("GET", "/api/health")).isEqualTo(RuleSettings.Fit.EXCLUDED);
        assertThat(API.fit("GET", "/other")).isEqualTo(RuleSettings.Fit.OTHER_PATH);
        assertThat(API.fit("GET", "/api/items")).isEqualTo(RuleSettings.Fit.APPLIES);
        assertThat(API.appliesTo("GET", "/api/items")).isTrue();
        assertThat(API.appliesTo("GET", "/api/health")).isFalse();
    }

    /** HEAD does GET's work (HttpServlet.doHead runs doGet): a rule of GET applies to it, not the reverse. */
    @Test
    void aRuleOfGetAppliesToHead() {
        assertThat(API.fit("HEAD", "/api/items")).isEqualTo(RuleSettings.Fit.APPLIES);
        assertThat(API.fit("HEAD", "/api/health")).isEqualTo(RuleSettings.Fit.EXCLUDED);
        RuleSettings head = SettingsReader.read(new MapSettingsSource(Map.of("ratelimit.rules", "h",
                "ratelimit.rule.h.methods", "HEAD,POST", "ratelimit.rule.h.limit", "1", "ratelimit.rule.h.window", "1s")))
                .rules().get(0);
        assertThat(head.fit("GET", "/")).isEqualTo(RuleSettings.Fit.OTHER_METHOD);
        assertThat(head.fit("HEAD", "/")).isEqualTo(RuleSettings.Fit.APPLIES);
        assertThat(matcher.match(new Request("HEAD", "/api/items", Map.of(), "alice", "192.0.2.1"), SETTINGS.rules()))
                .hasSize(1);
    }

    @Test
    void aRequestWithoutAPrincipalHasNoKeyAndThePrincipalIsWhatItLacks() {
        Request anonymous = new Request("GET", "/api/items", Map.of(), null, "192.0.2.1");
        assertThat(matcher.match(anonymous, SETTINGS.rules())).isEmpty();
        assertThat(matcher.missingPart(API, anonymous)).contains(new KeySpec.Part(KeySpec.Kind.PRINCIPAL, ""));

        Request alice = new Request("GET", "/api/items", Map.of(), "alice", "192.0.2.1");
        assertThat(matcher.match(alice, SETTINGS.rules())).singleElement()
                .extracting(RequestMatcher.Match::key).isEqualTo("ip:192.0.2.1+user:alice");
        assertThat(matcher.missingPart(API, alice)).isEmpty();
    }

    @Test
    void aPlanHeaderAndAForwardedClientAreBelievedOnlyFromATrustedProxy() {
        Map<String, String> headers = Map.of("X-Plan", "pro", "X-Forwarded-For", "203.0.113.9");
        Request viaProxy = new Request("GET", "/api/items", headers, "alice", "10.0.0.1");
        Request direct = new Request("GET", "/api/items", headers, "alice", "192.0.2.1");
        assertThat(matcher.plan(API, viaProxy)).contains("pro");
        assertThat(matcher.planRule(API, viaProxy).limit()).isEqualTo(100);
        assertThat(matcher.clientAddress(viaProxy)).isEqualTo("203.0.113.9");
        assertThat(matcher.plan(API, direct)).isEqualTo(Optional.empty());
        assertThat(matcher.planRule(API, direct).limit()).isEqualTo(10);
        assertThat(matcher.clientAddress(direct)).isEqualTo("192.0.2.1");
    }
}
