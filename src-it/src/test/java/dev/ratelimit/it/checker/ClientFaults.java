package dev.ratelimit.it.checker;

/**
 * Faults to throw inside a limiter instance's client instead of sending its next commands: in
 * this JVM ({@link ErrorClient}), or in the child JVM of an instance of the two-JVM target
 * ({@link ChildLimiter}, which arms the same client there).
 */
interface ClientFaults {

    /**
     * The next {@code count} commands each throw an Error: out of memory and out of stack, in turn.
     *
     * @param count how many
     */
    void armErrors(int count);

    /**
     * The next {@code count} commands each fail as a connection reset would.
     *
     * @param count how many
     */
    void armResets(int count);
}
