package dev.ratelimit.net;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Thousands of random and hostile forwarding headers: the resolver never throws, always returns
 * an address usable in a key, and never lets a header from an untrusted peer change the key.
 */
class ClientAddressFuzzTest {

    private static final List<Cidr> PROXIES = List.of(Cidr.parse("10.0.0.0/8").orElseThrow(),
            Cidr.parse("::1").orElseThrow());
    private static final String[] PIECES = {"1.2.3.4", "10.0.0.7", "::1", "[2001:db8::1]:80", "2001:db8::5",
            "fe80::1%eth0", "unknown", "_hidden", "for=", "for=\"", "\"", ",", ";", " ", "\t", "\r\n", "=", "[", "]",
            ":", "%", "by=10.0.0.1", "proto=https", "999.999.999.999", "01.2.3.4", "ü", "\u0000", "*", "{}",
            "for=\"[::1]:4711\"", "FOR=192.0.2.1", "::ffff:10.1.2.3", "1.2.3.4:5:6", "a".repeat(300)};

    private final Random random = new Random(20261202);

    private String randomHeader() {
        StringBuilder header = new StringBuilder();
        int pieces = random.nextInt(12);
        for (int i = 0; i < pieces; i++) {
            if (random.nextInt(4) == 0) {
                header.append((char) random.nextInt(0x3000));
            } else {
                header.append(PIECES[random.nextInt(PIECES.length)]);
            }
        }
        return header.toString();
    }

    private static boolean usableInAKey(String address) {
        if (address.contains("/")) { // an aggregated IPv6 network
            return Cidr.parse(address).isPresent();
        }
        return IpAddress.parse(address).map(ip -> ip.toString().equals(address)).orElse(false);
    }

    @Test
    void randomHeadersNeverThrowAndAlwaysGiveACanonicalAddress() {
        for (String header : new String[] {"X-Forwarded-For", "Forwarded"}) {
            ClientAddressResolver resolver = new ClientAddressResolver(PROXIES, header, 64);
            for (int i = 0; i < 5_000; i++) {
                String a = randomHeader();
                String b = randomHeader();
                String resolved = resolver.resolve("10.0.0.1", Collections.enumeration(List.of(a, b)));
                assertThat(usableInAKey(resolved)).as("%s from %s | %s", resolved, a, b).isTrue();
            }
        }
    }

    @Test
    void anUntrustedPeerIsNeverMovedByAnyHeader() {
        for (String header : new String[] {"X-Forwarded-For", "Forwarded"}) {
            ClientAddressResolver resolver = new ClientAddressResolver(PROXIES, header, 128);
            for (int i = 0; i < 5_000; i++) {
                String resolved = resolver.resolve("198.51.100.7", Collections.enumeration(List.of(randomHeader())));
                assertThat(resolved).isEqualTo("198.51.100.7");
            }
        }
    }

    @Test
    void hugeHeadersAreHandledInLinearTime() {
        ClientAddressResolver xff = new ClientAddressResolver(PROXIES, "X-Forwarded-For", 64);
        ClientAddressResolver forwarded = new ClientAddressResolver(PROXIES, "Forwarded", 64);
        String tenThousandHops = String.join(", ", Collections.nCopies(10_000, "10.0.0.9"));
        String oneMegabyte = "1".repeat(1 << 20);
        String quotes = "for=\"".repeat(100_000);
        // Generous: a linear pass takes milliseconds; a quadratic one would take minutes.
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertThat(xff.resolve("10.0.0.1", Collections.enumeration(List.of(tenThousandHops)))).isEqualTo("10.0.0.9");
            assertThat(xff.resolve("10.0.0.1", Collections.enumeration(List.of(oneMegabyte)))).isEqualTo("10.0.0.1");
            assertThat(forwarded.resolve("10.0.0.1", Collections.enumeration(List.of(quotes)))).isEqualTo("10.0.0.1");
            assertThat(forwarded.resolve("10.0.0.1", Collections.enumeration(List.of(tenThousandHops)))).isEqualTo("10.0.0.1");
        });
    }
}
