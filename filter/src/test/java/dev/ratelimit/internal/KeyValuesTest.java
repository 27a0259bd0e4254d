package dev.ratelimit.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KeyValuesTest {

    @Test
    void keepsShortSafeValuesReadable() {
        assertThat(KeyValues.safe("user:4182")).isEqualTo("user:4182");
        assertThat(KeyValues.safe("ip:2001:db8::1")).isEqualTo("ip:2001:db8::1");
    }

    @Test
    void hashesUnsafeOrLongValuesIntoBoundedSafeText() {
        for (String unsafe : new String[] {"a}b", "{x}", "a b", "a*b", "a\nb", "ü", "#abc", "x".repeat(100_000)}) {
            String safe = KeyValues.safe(unsafe);
            assertThat(safe).startsWith("#").hasSize(44).matches("#[A-Za-z0-9_-]+");
        }
        assertThat(KeyValues.safe("a b")).isNotEqualTo(KeyValues.safe("a  b"));
    }
}
