package dev.ratelimit.net;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class IpAddressTest {

    @ParameterizedTest
    @CsvSource({
            "192.0.2.1, 192.0.2.1",
            "2001:DB8:0:0:0:0:0:1, 2001:db8::1",
            "[2001:db8::1], 2001:db8::1",
            "fe80::1%eth0, fe80::1",
            "::ffff:192.0.2.1, 192.0.2.1",
            "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
            "::1, ::1",
            "::, ::"
    })
    void canonicalForm(String text, String canonical) {
        assertThat(IpAddress.parse(text)).hasValueSatisfying(a -> assertThat(a.toString()).isEqualTo(canonical));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "localhost", "example.com", "1.2.3", "256.1.1.1", "01.2.3.4", "deadbeef", "1.2.3.4.5",
            "unknown", "_hidden", ":::", "1:2:3:4:5:6:7:8:9", " ", ".:", ".:1", "::ffff:010.0.0.1", "::ffff:1.2.3"})
    void refusesWhatIsNotALiteralWithoutAskingDns(String text) {
        assertThat(IpAddress.parse(text)).isEmpty();
    }

    /** Only the text an address is written as in keys is taken as it is; all else is parsed. */
    @ParameterizedTest
    @CsvSource(value = {"192.0.2.1|true", "0.0.0.0|true", "255.255.255.255|true", " 192.0.2.1|false",
            "192.0.2.1 |false", "[192.0.2.1]|false", "192.0.2.1%eth0|false", "::ffff:192.0.2.1|false",
            "192.0.2.01|false", "192.0.2.256|false", "192.0.2|false", "192.0.2.1.5|false", "2001:db8::1|false",
            "|false"}, delimiter = '|', ignoreLeadingAndTrailingWhitespace = false)
    void aCanonicalDottedQuadIsItsOwnText(String text, boolean canonical) {
        assertThat(IpAddress.isCanonicalIpv4(text)).isEqualTo(canonical);
        if (canonical) {
            assertThat(IpAddress.parse(text)).hasValueSatisfying(a -> assertThat(a.toString()).isEqualTo(text));
        }
    }

    @Test
    void cidrContainment() {
        Cidr ten = Cidr.parse("10.0.0.0/8").orElseThrow();
        assertThat(ten.contains(IpAddress.parse("10.200.1.1").orElseThrow())).isTrue();
        assertThat(ten.contains(IpAddress.parse("11.0.0.1").orElseThrow())).isFalse();
        Cidr v6 = Cidr.parse("2001:db8::/32").orElseThrow();
        assertThat(v6.contains(IpAddress.parse("2001:db8:ffff::1").orElseThrow())).isTrue();
        assertThat(v6.contains(IpAddress.parse("10.0.0.1").orElseThrow())).isFalse();
        assertThat(Cidr.parse("127.0.0.1")).hasValueSatisfying(c -> assertThat(c.prefixLength()).isEqualTo(32));
        assertThat(Cidr.parse("10.0.0.0/33")).isEmpty();
        assertThat(Cidr.parse("10.0.0.0/x")).isEmpty();
    }
    /**
     * Dotted quads are read by hand: on random text of digits and dots (and a stray character),
     * the same answers as the regular expression they were read with before.
     */
    @Test
    void dottedQuadsReadAsTheRegularExpressionReadThem() {
        java.util.regex.Pattern quad = java.util.regex.Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
        java.util.Random random = new java.util.Random(45);
        String alphabet = "0123456789....x ";
        for (int i = 0; i < 200_000; i++) {
            StringBuilder text = new StringBuilder();
            int length = 1 + random.nextInt(17);
            for (int j = 0; j < length; j++) {
                text.append(alphabet.charAt(random.nextInt(i % 10 == 0 ? alphabet.length() : 14)));
            }
            String s = text.toString();
            java.util.Optional<String> expected = java.util.Optional.empty();
            var m = quad.matcher(s.trim());
            if (m.matches()) {
                boolean ok = true;
                for (int g = 1; g <= 4; g++) {
                    String part = m.group(g);
                    ok &= Integer.parseInt(part) <= 255 && !(part.length() > 1 && part.startsWith("0"));
                }
                if (ok) {
                    expected = java.util.Optional.of(s.trim());
                }
            }
            assertThat(IpAddress.parse(s).map(IpAddress::toString)).as("'%s'", s).isEqualTo(expected);
            assertThat(IpAddress.isCanonicalIpv4(s)).as("'%s'", s).isEqualTo(expected.filter(s::equals).isPresent());
        }
    }
}
