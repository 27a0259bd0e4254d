package dev.ratelimit.it;

/** The one way the test servers wait between their polls of a condition. */
final class Pauses {

    private Pauses() {
    }

    /**
     * Sleeps {@code millis} ms; an interrupt is kept and ends the wait with an exception.
     *
     * @param millis how long
     */
    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting", e);
        }
    }
}
