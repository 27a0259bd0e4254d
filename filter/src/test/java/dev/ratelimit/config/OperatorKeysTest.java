package dev.ratelimit.config;

import dev.ratelimit.internal.KeyValues;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Keys from the values an operator types, made as the filter makes them from a request. */
class OperatorKeysTest {

    private static RuleSettings rule(String key, boolean lowercase) {
        FilterSettings settings = SettingsReader.read(new MapSettingsSource(Map.of(
                "ratelimit.rules", "r",
                "ratelimit.rule.r.match", "/*",
                "ratelimit.rule.r.algorithm", "fixed-window",
                "ratelimit.rule.r.limit", "5",
                "ratelimit.rule.r.window", "1m",
                "ratelimit.rule.r.key", key,
                "ratelimit.rule.r.lowercase-key", Boolean.toString(lowercase))));
        return settings.rules().get(0);
    }

    @Test
    void eachKindOfPartIsMadeAsTheFilterMakesIt() {
        assertThat(OperatorKeys.keyOf(rule("principal", true), List.of("Alice"), 64)).isEqualTo("user:alice");
        assertThat(OperatorKeys.keyOf(rule("principal", false), List.of("Alice"), 64)).isEqualTo("user:Alice");
        assertThat(OperatorKeys.keyOf(rule("ip", false), List.of("2001:db8:1:2:3:4:5:6"), 64))
                .isEqualTo("ip:2001:db8:1:2::/64");
        assertThat(OperatorKeys.keyOf(rule("header:X-Api-Key", false), List.of("k 1"), 64))
                .isEqualTo("header.x-api-key:" + KeyValues.safe("k 1")).contains("#");
        assertThat(OperatorKeys.keyOf(rule("param:user+path", true), List.of("Bob", "/a"), 64))
                .isEqualTo("param.user:bob+path:/a");
        assertThat(OperatorKeys.keyOf(rule("global", false), List.of(), 64)).isEqualTo("global");
    }

    @Test
    void principalOrIpTakesAPrefixOrTellsAnAddressFromAName() {
        RuleSettings rule = rule("principal-or-ip", false);
        assertThat(OperatorKeys.keyOf(rule, List.of("user:203.0.113.7"), 64)).isEqualTo("user:203.0.113.7");
        assertThat(OperatorKeys.keyOf(rule, List.of("ip:203.0.113.7"), 64)).isEqualTo("ip:203.0.113.7");
        assertThat(OperatorKeys.keyOf(rule, List.of("203.0.113.7"), 64)).isEqualTo("ip:203.0.113.7");
        assertThat(OperatorKeys.keyOf(rule, List.of("carol"), 64)).isEqualTo("user:carol");
    }

    @Test
    void valuesTypedInOneTextAreOnePerWordUnlessTheKeyHasOnePart() {
        assertThat(OperatorKeys.keyOf(rule("principal", false), " John Smith ", 64)).isEqualTo("user:" + KeyValues.safe("John Smith"));
        assertThat(OperatorKeys.keyOf(rule("ip+header:X-Tenant", false), "203.0.113.7   acme", 64))
                .isEqualTo("ip:203.0.113.7+header.x-tenant:acme");
    }

    @Test
    void aWrongNumberOfValuesOrAValueItsPartCannotBeIsNamed() {
        assertThatThrownBy(() -> OperatorKeys.keyOf(rule("ip+path", false), List.of("203.0.113.7"), 64))
                .hasMessage("rule 'r' has key ip+path: give 2 value(s) (ip, path), not 1");
        assertThatThrownBy(() -> OperatorKeys.keyOf(rule("ip", false), List.of("nobody"), 64))
                .hasMessage("rule 'r' has key ip: 'nobody' is not an IP address");
        assertThatThrownBy(() -> OperatorKeys.keyOf(rule("principal", false), List.of(""), 64))
                .hasMessageContaining("the value for principal is empty");
    }

    /**
     * A path is read as explain reads PATH, as the container reads what was sent: pasted from an
     * access log (encoded, with a path parameter or a query) or typed decoded, it names the key
     * the filter built from the path it was given.
     */
    @Test
    void aPathIsReadAsTheContainerReadsIt() {
        RuleSettings rule = rule("path", false);
        String filters = "path:" + KeyValues.safe("/p/A b");
        assertThat(OperatorKeys.keyOf(rule, List.of("/p/A%20b;jsessionid=1?page=2"), 64)).isEqualTo(filters);
        assertThat(OperatorKeys.keyOf(rule, List.of("/p/x/../A b"), 64)).isEqualTo(filters);
        assertThat(OperatorKeys.keyOf(rule, "/p/A%20b", 64)).as("as the MBean takes it").isEqualTo(filters);
        assertThatThrownBy(() -> OperatorKeys.keyOf(rule, List.of("/p/a%2Fb"), 64))
                .hasMessageStartingWith("rule 'r' has key path: the path '/p/a%2Fb' has an encoded '/'")
                .hasMessageContaining("400 Bad Request");
        assertThatThrownBy(() -> OperatorKeys.keyOf(rule, List.of(""), 64)).hasMessageContaining("the value for path is empty");
    }
}
