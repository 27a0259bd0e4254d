package dev.ratelimit.servlet;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.config.HeaderMode;
import org.greenbytes.http.sfv.Parser;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Structured Field Integer has at most 15 digits (RFC 9651 §3.3.1). A rule the limiter takes
 * must give fields a client can parse, or be refused when it is made.
 */
class HugeQuotaFieldsTest {

    @Test
    void aQuotaOfSixteenDigitsIsRefusedOrParses() {
        // Promise 4: every header version parses as RFC 9651 Structured Fields.
        long limit = 1_000_000_000_000_000L;
        Rule huge;
        try {
            huge = Rule.of("huge", Algorithm.FIXED_WINDOW, limit, Duration.ofMillis(1));
        } catch (IllegalArgumentException refused) {
            assertThat(refused).hasMessageContaining(Long.toString(limit));
            return;
        }
        List<RateLimitHeaders.Entry> entries = List.of(new RateLimitHeaders.Entry(huge,
                Verdicts.allowed("huge", limit, limit - 1, Duration.ofMillis(1))));
        for (HeaderMode mode : HeaderMode.values()) {
            Map<String, String> fields = RateLimitHeaders.fields(mode, entries);
            for (Map.Entry<String, String> field : fields.entrySet()) {
                assertThatCode(() -> {
                    if (field.getKey().startsWith("X-") || field.getKey().endsWith("-Remaining")
                            || field.getKey().endsWith("-Reset")) {
                        Parser.parseItem(field.getValue());
                    } else {
                        Parser.parseList(field.getValue());
                    }
                }).as("%s: %s (%s)", field.getKey(), field.getValue(), mode).doesNotThrowAnyException();
            }
        }
    }

    @Test
    void theLargestIntegerAFieldCarriesIsAccepted() {
        assertThatCode(() -> Rule.of("big", Algorithm.FIXED_WINDOW, 999_999_999_999_999L, Duration.ofMillis(1)))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> Rule.of("big", Algorithm.TOKEN_BUCKET, 1, Duration.ofMillis(1))
                .toBuilder().burst(1_000_000_000_000_000L).build()).isInstanceOf(IllegalArgumentException.class);
    }
}
