package dev.ratelimit.servlet;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.config.HeaderMode;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every header version, read with an independent Structured Fields parser as a client would:
 * the items parse and carry the draft's parameter types.
 */
class HeaderVersionsTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    /** A windowed rule with 3 of 100 left, a burst rule and an in-flight rule. */
    private static final List<RateLimitHeaders.Entry> ENTRIES = List.of(
            new RateLimitHeaders.Entry(Rule.of("api", Algorithm.SLIDING_WINDOW_COUNTER, 100, MINUTE),
                    Verdicts.allowed("api", 100, 3, Duration.ofMillis(12_001))),
            new RateLimitHeaders.Entry(Rule.tokenBucket("burst", 100, MINUTE, 150),
                    Verdicts.allowed("burst", 100, 140, Duration.ofSeconds(6))),
            new RateLimitHeaders.Entry(Rule.of("jobs", Algorithm.CONCURRENCY, 20, MINUTE),
                    Verdicts.allowed("jobs", 20, 19, MINUTE)));

    @ParameterizedTest
    @EnumSource(HeaderMode.class)
    void everyModeHasItsVersionsAndNothingElse(HeaderMode mode) {
        Map<String, String> fields = RateLimitHeaders.fields(mode, ENTRIES);
        List<String> expected = switch (mode) {
            case DRAFT -> List.of("RateLimit-Policy", "RateLimit");
            case DRAFT_03 -> List.of("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
            case LEGACY -> List.of("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
            case BOTH -> List.of("RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining",
                    "X-RateLimit-Reset");
            case NONE -> List.of();
        };
        assertThat(fields.keySet()).containsExactlyElementsOf(expected);
        assertThat(RateLimitHeaders.fields(mode, List.of())).as("no rule decided: no fields").isEmpty();
    }

    @Test
    void draft11IsAListOfStringItemsWithTheDraftsParameters() {
        Map<String, String> fields = RateLimitHeaders.fields(HeaderMode.DRAFT, ENTRIES);
        List<ListElement<?>> policy = Parser.parseList(fields.get("RateLimit-Policy")).get();
        List<ListElement<?>> state = Parser.parseList(fields.get("RateLimit")).get();
        assertThat(policy).hasSize(3).allSatisfy(item -> assertThat(item).isInstanceOf(StringItem.class));
        assertThat(policy).extracting(item -> ((StringItem) item).get()).containsExactly("api", "burst", "jobs");
        assertThat(integer(policy.get(0), "q")).isEqualTo(100);
        assertThat(integer(policy.get(0), "w")).isEqualTo(60);
        assertThat(integer(policy.get(1), "q")).as("the burst").isEqualTo(150);
        assertThat(integer(policy.get(1), "w")).as("150 units at 100 a minute").isEqualTo(90);
        assertThat(integer(policy.get(2), "q")).isEqualTo(20);
        assertThat(policy.get(2).getParams().get("qu")).isInstanceOf(StringItem.class)
                .extracting(Item::get).isEqualTo("concurrent-requests");
        assertThat(policy.get(2).getParams()).doesNotContainKey("w");

        assertThat(state).extracting(item -> ((StringItem) item).get()).containsExactly("api", "burst", "jobs");
        assertThat(integer(state.get(0), "r")).isEqualTo(3);
        assertThat(integer(state.get(0), "t")).as("rounded up").isEqualTo(13);
        assertThat(integer(state.get(1), "r")).isEqualTo(140);
        assertThat(integer(state.get(2), "t")).isEqualTo(60);
    }

    /** -03: the expiring limit first, then a quota policy per windowed rule; Integers for the rest. */
    @Test
    void draft03DescribesTheRuleClosestToItsLimit() {
        Map<String, String> fields = RateLimitHeaders.fields(HeaderMode.DRAFT_03, ENTRIES);
        assertThat(fields.get("RateLimit-Limit")).isEqualTo("100, 100;w=60, 150;w=90");
        List<ListElement<?>> limit = Parser.parseList(fields.get("RateLimit-Limit")).get();
        assertThat(limit.get(0)).isInstanceOf(IntegerItem.class);
        assertThat(((IntegerItem) limit.get(0)).get()).as("the expiring limit: api has 3 left").isEqualTo(100);
        assertThat(limit.get(0).getParams()).isEmpty();
        for (ListElement<?> policy : limit.subList(1, limit.size())) {
            assertThat(policy).isInstanceOf(IntegerItem.class);
            assertThat(policy.getParams().get("w")).isInstanceOf(IntegerItem.class);
        }
        Item<?> remaining = Parser.parseItem(fields.get("RateLimit-Remaining"));
        Item<?> reset = Parser.parseItem(fields.get("RateLimit-Reset"));
        assertThat(remaining).isInstanceOf(IntegerItem.class).extracting(Item::get).isEqualTo(3L);
        assertThat(reset).isInstanceOf(IntegerItem.class).extracting(Item::get).isEqualTo(13L);
    }

    @Test
    void legacyFieldsAreThoseOfTheRuleClosestToItsLimit() {
        Map<String, String> fields = RateLimitHeaders.fields(HeaderMode.LEGACY, ENTRIES);
        assertThat(fields).containsEntry("X-RateLimit-Limit", "100").containsEntry("X-RateLimit-Remaining", "3")
                .containsEntry("X-RateLimit-Reset", "13");
    }

    /**
     * A shadow rule limits no client: the one-rule fields describe the enforcing rule closest to
     * its limit, even where the shadow rule is as close or closer; a shadow rule only where every
     * rule is one.
     */
    @Test
    void oneRuleFieldsDescribeAnEnforcingRuleNotAShadowOne() {
        Rule watch = Rule.fixedWindow("watch", 1, Duration.ofHours(1)).withShadow(true);
        Rule api = Rule.fixedWindow("api", 1, Duration.ofHours(1));
        List<RateLimitHeaders.Entry> tied = List.of(
                new RateLimitHeaders.Entry(watch, Verdicts.rejected("watch", 1, 0, Duration.ofSeconds(3_600),
                        Duration.ofSeconds(3_600))),
                new RateLimitHeaders.Entry(api, Verdicts.rejected("api", 1, 0, Duration.ofSeconds(1_067),
                        Duration.ofSeconds(1_067))));
        assertThat(RateLimitHeaders.fields(HeaderMode.LEGACY, tied)).as("tied at 0: the enforcing one")
                .containsEntry("X-RateLimit-Reset", "1067");
        assertThat(RateLimitHeaders.fields(HeaderMode.DRAFT_03, tied)).containsEntry("RateLimit-Reset", "1067");
        List<RateLimitHeaders.Entry> closer = List.of(
                new RateLimitHeaders.Entry(watch, Verdicts.rejected("watch", 1, 0, Duration.ofSeconds(3_600),
                        Duration.ofSeconds(3_600))),
                new RateLimitHeaders.Entry(Rule.fixedWindow("api", 10, Duration.ofMinutes(1)),
                        Verdicts.allowed("api", 10, 7, Duration.ofSeconds(20))));
        assertThat(RateLimitHeaders.fields(HeaderMode.LEGACY, closer)).as("the shadow rule closer still")
                .containsEntry("X-RateLimit-Remaining", "7").containsEntry("X-RateLimit-Reset", "20");
        assertThat(RateLimitHeaders.fields(HeaderMode.LEGACY, closer.subList(0, 1))).as("only shadow rules")
                .containsEntry("X-RateLimit-Remaining", "0").containsEntry("X-RateLimit-Reset", "3600");
    }

    private static long integer(ListElement<?> item, String parameter) {
        Item<?> value = item.getParams().get(parameter);
        assertThat(value).as("parameter %s of %s", parameter, item.serialize()).isInstanceOf(IntegerItem.class);
        return ((IntegerItem) value).get();
    }
}
