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
            "unknown", "_hidden", ":::", "1:2:3:4:5:6:7:8:9", " "})
    void refusesWhatIsNotALiteralWithoutAskingDns(String text) {
        assertThat(IpAddress.parse(text)).isEmpty();
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
}
