package dev.ratelimit.local;

/**
 * One rule's answer inside the in-process limiter, in milliseconds; the same four numbers the
 * Valkey script returns. {@code waitMillis} is the time until a request of the same cost
 * would be allowed by the state as it is after the decision (0 if it would be now).
 */
record Outcome(boolean allowed, long remaining, long resetAfterMillis, long waitMillis) {
}
