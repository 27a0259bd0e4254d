package dev.ratelimit.local;

/**
 * One rule's answer inside the in-process limiter, in milliseconds; the same numbers the
 * Valkey script returns. {@code nextMillis} is the time until more quota is made available
 * (the effective window; 0 when none will be, the quota being full); {@code waitMillis} is the
 * time until a request of the same cost would be allowed by the state as it is after the
 * decision (0 if it would be now);
 * {@code undoA} and {@code undoB} say what was written, as the script's reply does, for
 * {@link KeyState#refund} ({@code undoA} -1: nothing was written).
 */
record Outcome(boolean allowed, long remaining, long resetAfterMillis, long nextMillis, long waitMillis, long undoA,
               long undoB) {

    /** An outcome that wrote nothing: there is nothing to give back. */
    Outcome(boolean allowed, long remaining, long resetAfterMillis, long nextMillis, long waitMillis) {
        this(allowed, remaining, resetAfterMillis, nextMillis, waitMillis, -1, 0);
    }
}
