package dev.ratelimit.local;

/**
 * One rule's answer inside the in-process limiter, in milliseconds; the same four numbers the
 * Valkey script returns.
 */
record Outcome(boolean allowed, long remaining, long resetAfterMillis, long retryAfterMillis) {
}
