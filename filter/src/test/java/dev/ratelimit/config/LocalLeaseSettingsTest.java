package dev.ratelimit.config;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code local-lease} and {@code local-lease-time} read through {@link SettingsReader}: every
 * combination that cannot keep the rule's bound is refused, naming the property and its value.
 */
class LocalLeaseSettingsTest {

    private static Map<String, String> api(String algorithm, String limit, String window) {
        Map<String, String> m = new HashMap<>();
        m.put("ratelimit.valkey.url", "redis://localhost:6379");
        m.put("ratelimit.rules", "api");
        m.put("ratelimit.rule.api.match", "/api/*");
        m.put("ratelimit.rule.api.algorithm", algorithm);
        m.put("ratelimit.rule.api.limit", limit);
        m.put("ratelimit.rule.api.window", window);
        return m;
    }

    /** Promise: a lease that does not fit the rule or one of its plans is refused, by property and value. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        // The refill during a lease of 200 days at a billion per second is far beyond any burst.
        "token-bucket|1000000000|1s|10|200d||ratelimit.rule.api.local-lease='10'",
        "gcra|1000000000|1s|10|200d||ratelimit.rule.api.local-lease='10'",
        "fixed-window|100|1m|10|1m||ratelimit.rule.api.local-lease='10'",
        // A size whose sum with the cost overflows a long.
        "fixed-window|100|1m|9223372036854775807|1s||ratelimit.rule.api.local-lease='9223372036854775807'",
        "token-bucket|100|1s|9223372036854775807|1ms||ratelimit.rule.api.local-lease='9223372036854775807'",
        "fixed-window|100|1m|100|1s||ratelimit.rule.api.local-lease='100'",
        "token-bucket|100|1s|50|600ms||ratelimit.rule.api.local-lease='50'",
        "fixed-window|100|1m|10|1s|5|ratelimit.rule.api.local-lease='10'",
        "sliding-log|100|1m|10|1s||ratelimit.rule.api.local-lease='10'",
        "fixed-window|100|1m|0|1s||ratelimit.rule.api.local-lease-time='1s'",
    })
    void refusesWhatCannotKeepTheBound(String algorithm, String limit, String window, String size, String time,
                                       String planLimit, String expected) {
        Map<String, String> values = api(algorithm, limit, window);
        values.put("ratelimit.rule.api.local-lease", size);
        values.put("ratelimit.rule.api.local-lease-time", time);
        if (planLimit != null) {
            values.put("ratelimit.rule.api.plan", "header:X-Plan");
            values.put("ratelimit.rule.api.plan.free.limit", planLimit);
        }
        assertThatThrownBy(() -> SettingsReader.read(new MapSettingsSource(values)))
                .isInstanceOf(InvalidSettingsException.class).hasMessageContaining(expected);
    }

    /** The same rules with a lease that fits are read. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "token-bucket|1000000000|1s|10|1ms",
        "fixed-window|100|1m|10|1s",
        "gcra|100|1s|50|100ms",
    })
    void readsALeaseThatFits(String algorithm, String limit, String window, String size, String time) {
        Map<String, String> values = api(algorithm, limit, window);
        values.put("ratelimit.rule.api.local-lease", size);
        values.put("ratelimit.rule.api.local-lease-time", time);
        assertThat(SettingsReader.read(new MapSettingsSource(values)).rules()).hasSize(1);
    }
}
