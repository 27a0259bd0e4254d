package dev.ratelimit.config;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Where a cost comes from, and what counts as a reported cost: a whole number of 0 or more, never a rounded one. */
class CostSourceTest {

    @Test
    void readsTheThreeSources() {
        assertThat(CostSource.parse("header:X-Tokens-Used")).contains(new CostSource(CostSource.Kind.HEADER, "X-Tokens-Used"));
        assertThat(CostSource.parse(" attribute:rows ")).contains(new CostSource(CostSource.Kind.ATTRIBUTE, "rows"));
        assertThat(CostSource.parse("returned")).contains(new CostSource(CostSource.Kind.RETURNED, ""));
        assertThat(CostSource.parse("header:")).isEmpty();
        assertThat(CostSource.parse("header:X Tokens")).isEmpty();
        assertThat(CostSource.parse("attribute: ")).isEmpty();
        assertThat(CostSource.parse("body:tokens")).isEmpty();
        assertThat(CostSource.parse("header:X-Tokens-Used").orElseThrow()).hasToString("header:X-Tokens-Used");
    }

    @Test
    void aCostIsAWholeNumberOfZeroOrMore() {
        assertThat(CostSource.cost("12")).isEqualTo(12);
        assertThat(CostSource.cost(" 12 ")).isEqualTo(12);
        assertThat(CostSource.cost("0")).isZero();
        assertThat(CostSource.cost("999999999999999999")).isEqualTo(999_999_999_999_999_999L);
        assertThat(CostSource.cost(7)).isEqualTo(7);
        assertThat(CostSource.cost(7L)).isEqualTo(7);
        assertThat(CostSource.cost(3.0)).isEqualTo(3);
        assertThat(CostSource.cost(new BigDecimal("40.00"))).isEqualTo(40);
        assertThat(CostSource.cost(BigInteger.TEN)).isEqualTo(10);
        assertThat(CostSource.cost(new AtomicLong(5))).isEqualTo(5);
        assertThat(CostSource.cost(-0.0)).isZero();
        assertThat(CostSource.cost("1000000000000000000")).isEqualTo(1_000_000_000_000_000_000L);
        assertThat(CostSource.cost(1e18)).isEqualTo(1_000_000_000_000_000_000L);
        // Whole numbers of a long's most or past it: the most, cut at the debt's bound when charged.
        for (Object most : new Object[] {"9223372036854775807", "9223372036854775808", "99999999999999999999999",
                1e19, new BigInteger("123456789012345678901234567890"), BigInteger.TWO.pow(64).add(BigInteger.valueOf(5))}) {
            assertThat(CostSource.cost(most)).as("%s", most).isEqualTo(Long.MAX_VALUE);
        }
        for (Object none : new Object[] {null, "", "-5", "+7", "1e3", "0x10", "1.5", "12.0", "12 13", "1,000", "\u0661",
                -1, -0.5, 3.7, new BigDecimal("3.7"), new BigDecimal("2.5"), new BigDecimal("3000.7"), Double.NaN,
                Double.POSITIVE_INFINITY, new BigInteger("-18446744073709550616")}) {
            assertThat(CostSource.cost(none)).as("%s", none).isEqualTo(-1);
        }
    }
}
