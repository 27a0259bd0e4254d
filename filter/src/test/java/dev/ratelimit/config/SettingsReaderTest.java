package dev.ratelimit.config;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SettingsReaderTest {

    private static Map<String, String> valid() {
        Map<String, String> m = new HashMap<>();
        m.put("ratelimit.valkey.url", "redis://localhost:6379");
        m.put("ratelimit.rules", "api,login");
        m.put("ratelimit.rule.api.match", "/api/*");
        m.put("ratelimit.rule.api.algorithm", "token-bucket");
        m.put("ratelimit.rule.api.limit", "100");
        m.put("ratelimit.rule.api.window", "1m");
        m.put("ratelimit.rule.api.burst", "150");
        m.put("ratelimit.rule.api.key", "principal-or-ip");
        m.put("ratelimit.rule.login.match", "/login");
        m.put("ratelimit.rule.login.methods", "post");
        m.put("ratelimit.rule.login.algorithm", "sliding-log");
        m.put("ratelimit.rule.login.limit", "5");
        m.put("ratelimit.rule.login.window", "PT15M");
        m.put("ratelimit.rule.login.key", "param:username");
        m.put("ratelimit.rule.login.on-failure", "closed");
        return m;
    }

    /** cost-from and quota-unit read into the rule's settings; refused on concurrency and beside a local lease. */
    @Test
    void readsWhereACostIsReportedAndTheQuotasUnit() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.cost-from", "header:X-Tokens-Used");
        values.put("ratelimit.rule.api.quota-unit", "tokens");
        values.put("ratelimit.rule.login.cost-from", "attribute:rows");
        values.put("ratelimit.rule.login.algorithm", "fixed-window");
        FilterSettings settings = read(values);
        assertThat(settings.rules().get(0).costFrom()).contains(new CostSource(CostSource.Kind.HEADER, "X-Tokens-Used"));
        assertThat(settings.rules().get(0).quotaUnit()).contains("tokens");
        assertThat(settings.rules().get(1).costFrom()).contains(new CostSource(CostSource.Kind.ATTRIBUTE, "rows"));
        assertThat(settings.rules().get(1).quotaUnit()).isEmpty();

        values.put("ratelimit.rule.api.local-lease", "10");
        values.put("ratelimit.rule.login.algorithm", "concurrency");
        values.remove("ratelimit.rule.login.window");
        values.put("ratelimit.rule.login.quota-unit", "rows");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.api.local-lease='10' cannot be set with "
                        + "ratelimit.rule.api.cost-from=header:X-Tokens-Used")
                .hasMessageContaining("ratelimit.rule.login.cost-from='attribute:rows' does not apply to concurrency")
                .hasMessageContaining("ratelimit.rule.login.quota-unit='rows' does not apply to concurrency");
    }

    /**
     * max-delay read into the rule, its plans and its fallback; refused, naming the property, on
     * a window, with count-rejected, shadow or a local lease, too long for the rule or a plan.
     */
    @Test
    void readsHowLongABucketHoldsARequestAndRefusesWhatCannotHoldOne() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.max-delay", "2s");
        values.put("ratelimit.rule.api.plan", "header:X-Plan");
        values.put("ratelimit.rule.api.plan.pro.limit", "200");
        values.put("ratelimit.rule.api.on-failure", "local");
        values.put("ratelimit.max-delayed-requests", "50");
        FilterSettings settings = read(values);
        assertThat(settings.rules().get(0).rule().maxDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(settings.rules().get(0).plans().get("pro").maxDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(settings.rules().get(0).localRule().maxDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(settings.maxDelayedRequests()).isEqualTo(50);
        values.put("ratelimit.rule.api.max-delay", "0");
        assertThat(read(values).rules().get(0).rule().maxDelay()).isZero();

        values.put("ratelimit.rule.api.max-delay", "11m");
        values.put("ratelimit.rule.api.plan.pro.burst", "1");
        values.put("ratelimit.rule.login.max-delay", "1s");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.api.max-delay='11m' is too long: at most 630000 ms")
                .hasMessageContaining("ratelimit.rule.login.max-delay='1s' applies only to token-bucket and gcra, "
                        + "not to sliding-log");
        values.put("ratelimit.rule.api.max-delay", "3s");
        values.put("ratelimit.rule.login.algorithm", "gcra");
        values.put("ratelimit.rule.login.count-rejected", "true");
        values.put("ratelimit.max-delayed-requests", "-1");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.api.max-delay='3s' is too long for plan 'pro': at most 2100 ms")
                .hasMessageContaining("ratelimit.rule.login.max-delay='1s' cannot be set with "
                        + "ratelimit.rule.login.count-rejected=true")
                .hasMessageContaining("ratelimit.max-delayed-requests='-1'");

        Map<String, String> leased = valid();
        leased.put("ratelimit.rule.api.max-delay", "1s");
        leased.put("ratelimit.rule.api.local-lease", "10");
        assertThatThrownBy(() -> read(leased)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.api.local-lease='10' cannot be set with ratelimit.rule.api.max-delay=1s");
    }

    /** Every header version by its id, and the 3xx setting. */
    @ParameterizedTest
    @CsvSource({"draft,DRAFT", "draft-03,DRAFT_03", "DRAFT-03,DRAFT_03", "legacy,LEGACY", "both,BOTH", "none,NONE"})
    void readsEveryHeaderVersion(String id, HeaderMode mode) {
        Map<String, String> values = valid();
        values.put("ratelimit.headers", id);
        values.put("ratelimit.headers.on-redirects", "true");
        FilterSettings settings = read(values);
        assertThat(settings.headers()).isEqualTo(mode);
        assertThat(settings.headersOnRedirects()).isTrue();
    }

    private static FilterSettings read(Map<String, String> values) {
        return SettingsReader.read(new MapSettingsSource(values));
    }

    /**
     * {@code lease-timeout}, the permit timeout's name before 1.0, is still read, with a warning
     * naming the new name; both set is a problem, naming the old one.
     */
    @Test
    void theOldNameOfThePermitTimeoutIsReadWithAWarning() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.login.algorithm", "concurrency");
        values.remove("ratelimit.rule.login.window");
        values.put("ratelimit.rule.login.lease-timeout", "30s");
        List<String> warnings = new ArrayList<>();
        FilterSettings settings = SettingsReader.read(new MapSettingsSource(values), warnings::add);
        assertThat(settings.rule("login").orElseThrow().rule().window()).isEqualTo(Duration.ofSeconds(30));
        assertThat(warnings).as("the warnings of the reading").anyMatch(w -> w.contains("ratelimit.rule.login.lease-timeout")
                && w.contains("rename it ratelimit.rule.login.permit-timeout"));

        values.put("ratelimit.rule.login.permit-timeout", "20s");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class).hasMessageContaining(
                "ratelimit.rule.login.lease-timeout='30s' is the old name of ratelimit.rule.login.permit-timeout");

        values.remove("ratelimit.rule.login.lease-timeout");
        assertThat(read(values).rule("login").orElseThrow().rule().window()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void readsTheDesignExampleWithDefaults() {
        FilterSettings settings = read(valid());
        assertThat(settings.enabled()).isTrue();
        assertThat(settings.valkey().map(ValkeySettings::url)).contains("redis://localhost:6379");
        assertThat(settings.valkey().map(ValkeySettings::socketTimeout)).contains(Duration.ofMillis(50));
        assertThat(settings.keyPrefix()).isEqualTo("rl:v1");
        assertThat(settings.pipelines()).isEqualTo(2);
        assertThat(settings.headers()).isEqualTo(HeaderMode.DRAFT);
        assertThat(settings.headersOnRedirects()).as("the draft warns about fields on a 3xx").isFalse();
        assertThat(settings.clientIpHeader()).isEqualTo("X-Forwarded-For");
        assertThat(settings.rules()).hasSize(2);
        RuleSettings api = settings.rules().get(0);
        assertThat(api.rule().algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
        assertThat(api.rule().burst()).isEqualTo(150);
        assertThat(api.onFailure()).isEqualTo(OnFailure.OPEN);
        assertThat(api.appliesTo("GET", "/api/x")).isTrue();
        assertThat(api.appliesTo("GET", "/apix")).isFalse();
        RuleSettings login = settings.rules().get(1);
        assertThat(login.rule().window()).isEqualTo(Duration.ofMinutes(15));
        assertThat(login.methods()).containsExactly("POST");
        assertThat(login.appliesTo("GET", "/login")).isFalse();
        assertThat(login.appliesTo("POST", "/login")).isTrue();
        assertThat(login.onFailure()).isEqualTo(OnFailure.CLOSED);
        assertThat(login.key().parts()).containsExactly(new KeySpec.Part(KeySpec.Kind.PARAM, "username"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "ratelimit.rule.api.limit|-5|ratelimit.rule.api.limit='-5' must be a whole number of at least 1",
            "ratelimit.rule.api.limit|lots|ratelimit.rule.api.limit='lots'",
            "ratelimit.rule.api.window|0s|ratelimit.rule.api.window='0s' must be a whole number of milliseconds",
            "ratelimit.rule.api.window|soon|ratelimit.rule.api.window='soon' is not a duration",
            "ratelimit.rule.api.algorithm|leaky|ratelimit.rule.api.algorithm='leaky' must be one of fixed-window",
            "ratelimit.rule.api.key|ip+colour|ratelimit.rule.api.key='ip+colour' is not a key",
            "ratelimit.rule.api.key|header:|ratelimit.rule.api.key='header:' is not a key",
            "ratelimit.rule.api.match|api/*|ratelimit.rule.api.match='api/*' is not a servlet URL pattern",
            "ratelimit.rule.api.on-failure|maybe|ratelimit.rule.api.on-failure='maybe' must be one of open, closed, local",
            "ratelimit.rule.api.cost|500|ratelimit.rule.api.cost='500' must not exceed the rule's burst (150)",
            "ratelimit.rule.api.shadow|yes|ratelimit.rule.api.shadow='yes' must be true or false",
            "ratelimit.trusted-proxies|10.0.0.0/33|ratelimit.trusted-proxies='10.0.0.0/33' is not an IPv4 or IPv6",
            "ratelimit.trusted-proxies|proxy.example|ratelimit.trusted-proxies='proxy.example'",
            "ratelimit.headers|all|ratelimit.headers='all' must be one of draft, draft-03, legacy, both, none",
            "ratelimit.headers|draft-12|ratelimit.headers='draft-12' must be one of draft, draft-03, legacy, both, none",
            "ratelimit.headers.on-redirects|no|ratelimit.headers.on-redirects='no' must be true or false",
            "ratelimit.clock|ntp|ratelimit.clock='ntp' must be one of server, client",
            "ratelimit.valkey.timeout|-1s|ratelimit.valkey.timeout='-1s' is not a duration",
            "ratelimit.valkey.url|http://localhost|ratelimit.valkey.url='http://localhost' must start with redis:// or rediss://",
            "ratelimit.valkey.url|localhost:6379|ratelimit.valkey.url='localhost:6379' must start with redis:// or rediss://",
            "ratelimit.valkey.url|redis://127.0.0.1:99999|ratelimit.valkey.url='redis://127.0.0.1:99999' has port 99999: a port is from 1 to 65535",
            "ratelimit.valkey.url|redis://valkey:0|ratelimit.valkey.url='redis://valkey:0' has port 0: a port is from 1 to 65535",
            "ratelimit.valkey.url|redis:///0|ratelimit.valkey.url='redis:///0' has no host",
            "ratelimit.valkey.url|redis://valkey_1:6379|ratelimit.valkey.url='redis://valkey_1:6379' has no host",
            "ratelimit.valkey.url|redis://valkey:63a79|ratelimit.valkey.url='redis://valkey:63a79' has no host",
            "ratelimit.valkey.url|redis://valkey:6379/one|ratelimit.valkey.url='redis://valkey:6379/one' has path /one: only a database number",
            "ratelimit.valkey.url|redis://valkey/-1|ratelimit.valkey.url='redis://valkey/-1' has path /-1: only a database number",
            "ratelimit.valkey.url|redis://val key|ratelimit.valkey.url='redis://val key' is not a valid URI",
            "ratelimit.key-prefix|rl {x}|ratelimit.key-prefix='rl {x}'",
            "ratelimit.ipv6-prefix|200|ratelimit.ipv6-prefix='200' must be a whole number from 1 to 128",
            "ratelimit.rules|api,api|ratelimit.rules='api' is listed twice",
            "ratelimit.rules|api,login,ghost|ratelimit.rule.ghost.limit is required",
            "ratelimit.rule.login.burst|9|ratelimit.rule.login.burst='9' applies only to token-bucket and gcra",
            "ratelimit.valkey.tiemout|1s|ratelimit.valkey.tiemout is not a known setting",
            "ratelimit.valkey.sentinel.nodes|s1:26379|ratelimit.valkey.sentinel.nodes='s1:26379' needs ratelimit.valkey.sentinel.master",
            "ratelimit.valkey.sentinel.master|primary|ratelimit.valkey.sentinel.master='primary' needs ratelimit.valkey.sentinel.nodes",
            "ratelimit.valkey.pipelines|65|ratelimit.valkey.pipelines='65' must be a whole number from 0 to 64",
            "ratelimit.valkey.pipelines|-1|ratelimit.valkey.pipelines='-1' must be a whole number from 0 to 64",
            "ratelimit.rule.login.count-when|401|ratelimit.rule.login.count-when='401' must be status: and a list",
            "ratelimit.rule.login.count-when|status:401,6xx,,abc|ratelimit.rule.login.count-when='status:401,6xx,,abc' has 6xx, (empty), abc: each item must be a status from 100 to 599",
            "ratelimit.rule.login.refund-when|status:99|ratelimit.rule.login.refund-when='status:99' has 99",
            "ratelimit.refresh|10ms|ratelimit.refresh='10ms' must be a whole number of milliseconds, at least 100 ms",
            "ratelimit.refresh|soon|ratelimit.refresh='soon' is not a duration",
            "ratelimit.rule.login.lease-timeout|30s|ratelimit.rule.login.lease-timeout='30s' applies only to algorithm=concurrency",
            "ratelimit.rule.login.cost-from|header:X-Cost|ratelimit.rule.login.cost-from='header:X-Cost' does not apply to sliding-log",
            "ratelimit.rule.api.cost-from|body:tokens|ratelimit.rule.api.cost-from='body:tokens' is not a cost source",
            "ratelimit.rule.api.cost-from|header:X Cost|ratelimit.rule.api.cost-from='header:X Cost' is not a cost source",
            "ratelimit.rule.api.quota-unit|Tokens|ratelimit.rule.api.quota-unit='Tokens' is not a quota unit",
    })
    void namesThePropertyAndTheValueOfEveryProblem(String property, String value, String expected) {
        Map<String, String> values = valid();
        values.put(property, value);
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining(expected);
    }

    @Test
    void everyConnectionSettingReachesTheValkeySettingsItBuilds(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "not read until connecting");
        Map<String, String> values = valid();
        values.put("ratelimit.valkey.url", "rediss://localhost:6380/2");
        values.put("ratelimit.valkey.timeout", "70ms");
        values.put("ratelimit.valkey.connect-timeout", "80ms");
        values.put("ratelimit.valkey.pool.max-total", "9");
        values.put("ratelimit.valkey.pool.max-idle", "4");
        values.put("ratelimit.valkey.pool.max-wait", "30ms");
        values.put("ratelimit.valkey.tls.ca-file", ca.toString());
        ValkeySettings valkey = read(values).valkey().orElseThrow();
        assertThat(valkey.url()).isEqualTo("rediss://localhost:6380/2");
        assertThat(valkey.socketTimeout()).isEqualTo(Duration.ofMillis(70));
        assertThat(valkey.connectTimeout()).isEqualTo(Duration.ofMillis(80));
        assertThat(valkey.poolMaxTotal()).isEqualTo(9);
        assertThat(valkey.poolMaxIdle()).isEqualTo(4);
        assertThat(valkey.poolMaxWait()).isEqualTo(Duration.ofMillis(30));
        assertThat(valkey.tlsCaFile()).contains(ca);
        assertThat(valkey.cluster()).isFalse();
        assertThat(valkey.sentinel()).isEmpty();

        values.put("ratelimit.valkey.cluster", "true");
        assertThat(read(values).valkey().orElseThrow().cluster()).isTrue();
    }

    @Test
    void readsASentinelPrimaryAndNamesEveryBadSentinel() {
        Map<String, String> values = valid();
        values.put("ratelimit.valkey.sentinel.master", "primary");
        values.put("ratelimit.valkey.sentinel.nodes", "s1:26379, [::1]:26380");
        FilterSettings settings = read(values);
        assertThat(settings.valkey().flatMap(ValkeySettings::sentinel)).hasValueSatisfying(sentinel -> {
            assertThat(sentinel.master()).isEqualTo("primary");
            assertThat(sentinel.nodes()).containsExactly("s1:26379", "[::1]:26380");
        });

        values.put("ratelimit.valkey.sentinel.nodes", "s1,s2:0,s3:26379");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='s1' must be host:port")
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='s2:0' must be host:port")
                .hasMessageNotContaining("s3:26379'");

        values.put("ratelimit.valkey.sentinel.nodes", "s1:99999,redis://s2:26379,s 3:26379,app@s4:26379,[::1:26380,s5:26379");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='s1:99999' must be host:port")
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='redis://s2:26379' must be host:port")
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='s 3:26379' must be host:port")
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='app@s4:26379' must be host:port")
                .hasMessageContaining("ratelimit.valkey.sentinel.nodes='[::1:26380' must be host:port")
                .hasMessageNotContaining("s5:26379'");

        values.put("ratelimit.valkey.sentinel.nodes", "s1:26379");
        values.put("ratelimit.valkey.cluster", "true");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.valkey.sentinel.master='primary' cannot be used with "
                        + "ratelimit.valkey.cluster=true");
    }

    @Test
    void refreshIsOffUnlessSet() {
        assertThat(read(valid()).refresh()).isEmpty();
        Map<String, String> values = valid();
        values.put("ratelimit.refresh", "off");
        assertThat(read(values).refresh()).isEmpty();
        values.put("ratelimit.refresh", "30s");
        assertThat(read(values).refresh()).hasValue(Duration.ofSeconds(30));
    }

    @Test
    void readsCountWhenAndRefundWhenAndRefusesBoth() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.login.count-when", "status:401, 403");
        values.put("ratelimit.rule.api.refund-when", "STATUS:5xx");
        FilterSettings settings = read(values);
        OutcomeCondition failures = settings.rules().get(1).outcome().orElseThrow();
        assertThat(failures.givesBack(200)).as("a success does not count").isTrue();
        assertThat(failures.givesBack(401)).isFalse();
        assertThat(failures.givesBack(403)).isFalse();
        assertThat(failures.givesBack(404)).isTrue();
        OutcomeCondition serverErrors = settings.rules().get(0).outcome().orElseThrow();
        assertThat(serverErrors.givesBack(500)).isTrue();
        assertThat(serverErrors.givesBack(599)).isTrue();
        assertThat(serverErrors.givesBack(499)).isFalse();
        assertThat(serverErrors.givesBack(200)).isFalse();

        values.put("ratelimit.rule.login.refund-when", "status:5xx");
        assertThatThrownBy(() -> read(values)).hasMessageContaining(
                "ratelimit.rule.login.refund-when='status:5xx' cannot be set together with "
                        + "ratelimit.rule.login.count-when=status:401, 403");
    }

    @Test
    void readsAConcurrencyRuleWithItsLeaseTimeoutAndRefusesWhatDoesNotApply() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.algorithm", "concurrency");
        values.remove("ratelimit.rule.api.window");
        values.remove("ratelimit.rule.api.burst");
        RuleSettings api = read(values).rules().get(0);
        assertThat(api.rule().algorithm()).isEqualTo(dev.ratelimit.Algorithm.CONCURRENCY);
        assertThat(api.rule().window()).as("the default lease timeout").isEqualTo(Duration.ofSeconds(60));
        values.put("ratelimit.rule.api.lease-timeout", "5m");
        assertThat(read(values).rules().get(0).rule().window()).isEqualTo(Duration.ofMinutes(5));

        values.put("ratelimit.rule.api.window", "1m");
        values.put("ratelimit.rule.api.count-rejected", "true");
        values.put("ratelimit.rule.api.count-when", "status:401");
        values.put("ratelimit.rule.api.limit", "20000");
        assertThatThrownBy(() -> read(values))
                .hasMessageContaining("ratelimit.rule.api.window='1m' does not apply to concurrency")
                .hasMessageContaining("ratelimit.rule.api.count-rejected='true' does not apply to concurrency")
                .hasMessageContaining("ratelimit.rule.api.count-when='status:401' does not apply to concurrency")
                .hasMessageContaining("ratelimit.rule.api.limit='20000' must be at most 10000 for concurrency");
    }

    @Test
    void readsPlansEachWithTheRulesShapeAndNamesEveryBadOne() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.plan", "header:X-Plan");
        values.put("ratelimit.rule.api.plan.free.limit", "10");
        values.put("ratelimit.rule.api.plan.pro.limit", "1000");
        values.put("ratelimit.rule.api.plan.pro.window", "1h");
        RuleSettings api = read(values).rules().get(0);
        assertThat(api.plan().orElseThrow().kind()).isEqualTo(PlanSpec.Kind.HEADER);
        Rule free = api.plans().get("free");
        assertThat(free.limit()).isEqualTo(10);
        assertThat(free.burst()).as("100 / 150 of the rule's shape").isEqualTo(15);
        assertThat(free.window()).isEqualTo(Duration.ofMinutes(1));
        assertThat(api.plans().get("pro").window()).isEqualTo(Duration.ofHours(1));
        assertThat(api.ruleFor("pro", true)).isEqualTo(api.plans().get("pro"));
        assertThat(api.ruleFor("free", true)).isEqualTo(free);
        assertThat(api.ruleFor("pro", false)).as("an untrusted plan is ignored").isEqualTo(api.rule());
        assertThat(api.ruleFor("free", false)).as("even a lower one").isEqualTo(api.rule());
        assertThat(api.ruleFor("gold", true)).as("an unlisted plan").isEqualTo(api.rule());
        assertThat(api.ruleFor(null, true)).isEqualTo(api.rule());

        values.put("ratelimit.rule.login.plan.gold.limit", "9");
        values.put("ratelimit.rule.api.plan.pro.burst", "0");
        values.put("ratelimit.rule.api.plan.b@d.limit", "3");
        assertThatThrownBy(() -> read(values))
                .hasMessageContaining("needs ratelimit.rule.login.plan, where the caller's plan comes from")
                .hasMessageContaining("ratelimit.rule.api.plan.pro.burst='0' must be a whole number of at least 1")
                .hasMessageContaining("ratelimit.rule.api.plan.b@d.*='b@d' is not a plan name");

        Map<String, String> bad = valid();
        bad.put("ratelimit.rule.api.plan", "cookie:plan");
        assertThatThrownBy(() -> read(bad)).hasMessageContaining(
                "ratelimit.rule.api.plan='cookie:plan' must be header:<name>, role:<role>,<role>... or attribute:<name>");
        bad.put("ratelimit.rule.api.plan", "role:free,pro");
        assertThatThrownBy(() -> read(bad)).hasMessageContaining("ratelimit.rule.api.plan='role:free,pro' names no plan");
    }

    /**
     * A plan whose limit (or burst) is below the rule's cost could never allow a request of its
     * callers: refused at start-up (and so in a refresh's reading), naming the plan's property.
     */
    @Test
    void aPlanBelowTheRulesCostIsAProblemNamingItsProperty() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.cost", "20");
        values.put("ratelimit.rule.api.plan", "header:X-Plan");
        values.put("ratelimit.rule.api.plan.free.limit", "10");
        values.put("ratelimit.rule.api.plan.pro.limit", "1000");
        values.put("ratelimit.rule.api.plan.tight.limit", "100");
        values.put("ratelimit.rule.api.plan.tight.burst", "19");
        values.put("ratelimit.rule.login.cost", "2");
        values.put("ratelimit.rule.login.plan", "role:basic");
        values.put("ratelimit.rule.login.plan.basic.limit", "1");
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.api.plan.free.limit='10' gives the plan a burst of 15, "
                        + "below the rule's cost (20)")
                .hasMessageContaining("ratelimit.rule.api.plan.tight.burst='19' must not be below the rule's cost (20)")
                .hasMessageContaining("ratelimit.rule.login.plan.basic.limit='1' must not be below the rule's cost (2)")
                .hasMessageNotContaining("plan.pro");

        values.put("ratelimit.rule.api.plan.free.limit", "14");
        values.put("ratelimit.rule.api.plan.free.burst", "20");
        values.remove("ratelimit.rule.api.plan.tight.burst");
        values.put("ratelimit.rule.login.plan.basic.limit", "2");
        assertThat(read(values).rules().get(0).plans().get("free").burst()).isEqualTo(20);
    }

    /**
     * A rejected request is answered 429, and a rule counting by outcome keeps or gives back its
     * units by the response's status: count-rejected with an outcome that gives a 429 back would
     * record rejected attempts only to keep them against the rule's own word.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "count-when|status:401,403|ratelimit.rule.login.count-rejected='true' cannot be set with count-when=status:401,403",
            "refund-when|status:4xx|ratelimit.rule.login.count-rejected='true' cannot be set with refund-when=status:4xx",
    })
    void countRejectedWithAnOutcomeThatGivesBackA429IsAProblem(String setting, String value, String expected) {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.login.count-rejected", "true");
        values.put("ratelimit.rule.login." + setting, value);
        assertThatThrownBy(() -> read(values)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining(expected);

        values.put("ratelimit.rule.login.count-when", "status:401,403,429");
        values.remove("ratelimit.rule.login.refund-when");
        assertThat(read(values).rules().get(1).rule().countRejected()).as("429 counts: rejected attempts are kept")
                .isTrue();
        values.remove("ratelimit.rule.login.count-when");
        values.put("ratelimit.rule.login.refund-when", "status:5xx");
        assertThat(read(values).rules().get(1).rule().countRejected()).isTrue();
    }

    @Test
    void reportsEveryProblemAtOnce() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.limit", "0");
        values.put("ratelimit.rule.login.window", "forever");
        values.put("ratelimit.headers", "many");
        InvalidSettingsException e = (InvalidSettingsException) org.assertj.core.api.Assertions.catchThrowable(() -> read(values));
        assertThat(e.problems()).hasSize(3);
        assertThat(e.getMessage()).contains("3 problems").contains("limit='0'").contains("window='forever'")
                .contains("headers='many'");
    }

    /**
     * A limit or burst beyond the rule's bounds, alone or times the window, is said against the
     * property that holds it (and the window's, when the product is what broke), not the rule's
     * every setting.
     */
    @Test
    void aLimitOrBurstTooLargeIsSaidAgainstItsProperty() {
        Map<String, String> values = valid();
        values.put("ratelimit.rule.api.limit", "2000000000000");
        assertThatThrownBy(() -> read(values)).hasMessageContaining("ratelimit.rule.api.limit='2000000000000' is too large "
                + "with ratelimit.rule.api.window='1m': max(limit, burst) × window in ms must stay below 2^50")
                .hasMessageNotContaining("ratelimit.rule.api.*");
        values.put("ratelimit.rule.api.limit", "10000000000000000");
        values.put("ratelimit.rule.api.burst", "10000000000000000");
        assertThatThrownBy(() -> read(values)).hasMessageContaining("ratelimit.rule.api.limit='10000000000000000' is too "
                + "large: at most 999999999999999").hasMessageNotContaining("ratelimit.rule.api.*");
        values.put("ratelimit.rule.api.limit", "100");
        values.put("ratelimit.rule.api.burst", "2000000000000");
        assertThatThrownBy(() -> read(values)).hasMessageContaining("ratelimit.rule.api.burst='2000000000000' is too large "
                + "with ratelimit.rule.api.window='1m'");

        values.put("ratelimit.rule.api.burst", "150");
        values.put("ratelimit.rule.api.plan", "header:X-Plan");
        values.put("ratelimit.rule.api.plan.pro.limit", "1000");
        values.put("ratelimit.rule.api.plan.pro.window", "36500d");
        assertThatThrownBy(() -> read(values)).hasMessageContaining("ratelimit.rule.api.plan.pro.limit='1000' is too large "
                + "with ratelimit.rule.api.plan.pro.window='36500d'").hasMessageNotContaining(".pro.*");

        Map<String, String> held = valid();
        held.put("ratelimit.rule.login.algorithm", "concurrency");
        held.put("ratelimit.rule.login.limit", "10000");
        held.remove("ratelimit.rule.login.window");
        held.put("ratelimit.rule.login.lease-timeout", "36500d");
        assertThatThrownBy(() -> read(held)).hasMessageContaining("ratelimit.rule.login.limit='10000' is too large "
                + "with ratelimit.rule.login.lease-timeout='36500d'");
    }

    @Test
    void neverShowsTheValkeyPassword() {
        Map<String, String> values = valid();
        values.put("ratelimit.valkey.url", "http://limiter:hunter2@localhost");
        assertThatThrownBy(() -> read(values)).hasMessageNotContaining("hunter2").hasMessageContaining("limiter:***@");
        values.put("ratelimit.valkey.url", "redis://limiter:hunter2@localhost:99999");
        assertThatThrownBy(() -> read(values)).hasMessageNotContaining("hunter2")
                .hasMessageContaining("ratelimit.valkey.url='redis://limiter:***@localhost:99999' has port 99999");
        values.put("ratelimit.valkey.url", "redis://limiter:hunter2@local host");
        assertThatThrownBy(() -> read(values)).hasMessageNotContaining("hunter2").hasMessageContaining("is not a valid URI");
    }

    @Test
    void noRulesIsAProblemUnlessDisabled() {
        assertThatThrownBy(() -> read(Map.of("ratelimit.valkey.url", "redis://localhost:6379")))
                .hasMessageContaining("ratelimit.rules is empty");
        assertThat(read(Map.of("ratelimit.enabled", "false", "ratelimit.rule.x.limit", "nonsense")).enabled()).isFalse();
    }

    /** A settings file in the wrong place: nothing of ours at all, said so, with where to put it. */
    @Test
    void noPropertyOfOursAtAllSaysWhereTheFileGoes() {
        assertThatThrownBy(() -> read(Map.of("other.app.setting", "1")))
                .hasMessageContaining("no ratelimit.* property was found at all")
                .hasMessageContaining("WEB-INF/classes/META-INF/microprofile-config.properties")
                .hasMessageNotContaining("ratelimit.rules is empty");
        assertThatThrownBy(() -> read(Map.of("RATELIMIT_VALKEY_URL", "redis://localhost:6379")))
                .as("an environment variable of ours is a property of ours").hasMessageContaining("ratelimit.rules is empty");
    }

    @Test
    void aSlidingLogLimitPastTheBoundIsAListedProblem() {
        Map<String, String> m = valid();
        m.put("ratelimit.rule.login.limit", "100000");
        assertThatThrownBy(() -> read(m)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.login.limit").hasMessageContaining("100000")
                .hasMessageContaining("10000");
        m.put("ratelimit.rule.login.limit", "10000");
        assertThat(read(m).rules().get(1).rule().limit()).isEqualTo(10_000);
    }

    /** The review's cases: an ArithmeticException instead of a listed problem. */
    @ParameterizedTest
    @CsvSource({"ratelimit.rule.api.window, 300000d", "ratelimit.rule.api.window, PT2562048H",
            "ratelimit.breaker.open-for, 300000d", "ratelimit.valkey.timeout, PT2562048H",
            "ratelimit.failure-retry-after, 9999999999999d", "ratelimit.rule.api.limit, 99999999999999999999",
            "ratelimit.rule.api.burst, 9223372036854775807"})
    void hugeDurationsAndNumbersAreListedProblemsNamingTheProperty(String property, String value) {
        Map<String, String> m = valid();
        m.put(property, value);
        assertThatThrownBy(() -> read(m)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining(property.substring(0, property.lastIndexOf('.')))
                .hasMessageContaining(value);
    }

    /** An environment that runs fewer rules than the file defines: the others are ignored, not an error. */
    @Test
    void aRuleConfiguredButNotListedIsIgnored() {
        Map<String, String> m = valid();
        m.put("ratelimit.rules", "api");
        m.put("ratelimit.rule.apii.limit", "3");
        FilterSettings settings = read(m);
        assertThat(settings.rules()).extracting(r -> r.rule().name()).containsExactly("api");
    }

    /**
     * MicroProfile Config maps RATELIMIT_KEY_PREFIX to ratelimit.key.prefix: the environment form of
     * ratelimit.key-prefix, not a typo. A variable that matches no setting is ignored; the same
     * name in the file is still a typo.
     */
    @Test
    void environmentFormsOfSettingsWithHyphensAreNotTypos() {
        Map<String, String> m = valid();
        m.put("ratelimit.key.prefix", "rl:probe");
        m.put("ratelimit.rule.login.on.failure", "closed");
        m.put("ratelimit.rule.api.limt", "5");
        Set<String> fromEnvironment = Set.of("ratelimit.key.prefix", "ratelimit.rule.login.on.failure",
                "ratelimit.rule.api.limt");
        SettingsSource environment = new SettingsSource() {
            @Override
            public Optional<String> get(String name) {
                return Optional.ofNullable(m.get(name));
            }

            @Override
            public Set<String> names() {
                return m.keySet();
            }

            @Override
            public boolean fromEnvironment(String name) {
                return fromEnvironment.contains(name);
            }
        };
        assertThat(SettingsReader.read(environment).rules()).hasSize(2);
        assertThatThrownBy(() -> read(m)).isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.key.prefix is not a known setting")
                .hasMessageContaining("ratelimit.rule.api.limt is not a known setting");
        assertThat(SettingsSource.environmentForm("ratelimit.rule.login-user.on-failure"))
                .isEqualTo("RATELIMIT_RULE_LOGIN_USER_ON_FAILURE");
    }
}
