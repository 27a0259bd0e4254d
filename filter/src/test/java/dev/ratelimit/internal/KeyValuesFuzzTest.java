package dev.ratelimit.internal;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Any text at all becomes a short, safe key part, and different texts stay different. */
class KeyValuesFuzzTest {

    @Test
    void randomTextIsAlwaysSafeBoundedAndInjective() {
        Random random = new Random(42);
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 100_000; i++) {
            int length = random.nextInt(10) == 0 ? random.nextInt(5_000) : random.nextInt(20);
            StringBuilder text = new StringBuilder();
            for (int j = 0; j < length; j++) {
                text.append(random.nextInt(3) == 0 ? (char) random.nextInt(0x10000) : (char) (0x20 + random.nextInt(0x5f)));
            }
            if (text.isEmpty()) {
                continue;
            }
            String value = text.toString();
            String safe = KeyValues.safe(value);
            assertThat(safe).as("key part of %s", escaped(value)).hasSizeLessThanOrEqualTo(KeyValues.MAX_LITERAL_LENGTH)
                    .matches("[A-Za-z0-9:._@/=%,#-]+").doesNotContain("{", "}", "*", " ", "+");
            String before = seen.put(safe, value);
            assertThat(before == null || before.equals(value))
                    .as("%s and %s share %s", escaped(before), escaped(value), safe).isTrue();
        }
    }

    /** Printable in a failure message whatever it holds. */
    private static String escaped(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder();
        text.chars().limit(200).forEach(c -> out.append(c >= 0x20 && c < 0x7f ? String.valueOf((char) c)
                : String.format("\\u%04x", c)));
        return out.toString();
    }
}
