package dev.ratelimit.internal;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Makes any text safe to embed in a Valkey key.
 *
 * <p>A value that is short and made only of safe characters is kept as it is, so keys stay
 * readable ({@code user:4182}, {@code ip:2001:db8::1}). Anything else (braces, which would
 * change the cluster hash tag; spaces, glob characters and control characters, which break
 * {@code SCAN} patterns and logs; very long values, which would bloat memory) is replaced by
 * {@code #} and the Base64url SHA-256 of the value. {@code #} is never kept as-is, so a
 * literal value cannot be forged to equal another value's hash; nor is {@code +}, which joins
 * the parts of a combined key, so a value cannot pose as two parts.
 */
public final class KeyValues {

    /** Longer values are hashed: keys stay bounded whatever the client sends. */
    public static final int MAX_LITERAL_LENGTH = 128;

    private KeyValues() {
    }

    /**
     * The value itself when safe, its hash otherwise.
     *
     * @param value any text
     * @return text of at most {@value #MAX_LITERAL_LENGTH} safe characters
     */
    public static String safe(String value) {
        return isSafe(value) ? value : "#" + sha256(value);
    }

    /**
     * The Valkey key holding a rule's state for a key: one format for the limiter and the tools
     * that explain or inspect it.
     *
     * @param prefix    the key prefix ({@code ratelimit.key-prefix})
     * @param rule      the rule's name
     * @param algorithm the algorithm's id
     * @param key       what is limited, as a rule's key builds it
     * @return {@code <prefix>:<rule>:<algorithm>:{<safe key>}}
     */
    public static String stateKey(String prefix, String rule, String algorithm, String key) {
        return prefix + ':' + rule + ':' + algorithm + ":{" + safe(key) + '}';
    }

    private static boolean isSafe(String value) {
        if (value.isEmpty() || value.length() > MAX_LITERAL_LENGTH) {
            return false;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == ':' || c == '.' || c == '-' || c == '_' || c == '@' || c == '/' || c == '='
                    || c == '%' || c == ',';
            if (!safe) {
                return false;
            }
        }
        return true;
    }

    private static String sha256(String value) {
        try {
            // The raw UTF-16 code units: every charset encoder replaces an unpaired surrogate
            // with the same substitute, which would give two different values one key.
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                sha.update((byte) (c >>> 8));
                sha.update((byte) c);
            }
            byte[] digest = sha.digest();
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
