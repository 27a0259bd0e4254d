package dev.ratelimit.internal;

/**
 * What one rule's take wrote, so that it can be given back exactly (see {@code refund.lua}, and
 * the in-process twin's {@code KeyState#refund}): never units another take put in their place.
 *
 * @param where where the units went, by algorithm: the end of the fixed window, the start of
 *              the sliding window counter's window, the time of a sliding log's entry or of a
 *              bucket's take, the number of the call a concurrency permit is named after; -1 when
 *              nothing was written
 * @param which which units they are: the generation of the state they went into (the number of
 *              the call that started it), the call a sliding log's entry is named after; 0 for a
 *              concurrency permit
 */
public record Undo(long where, long which) {

    /** Nothing was written: nothing to give back. */
    public static final Undo NONE = new Undo(-1, 0);

    /**
     * Whether the take wrote units that can be given back.
     *
     * @return true when it wrote
     */
    public boolean wrote() {
        return where >= 0;
    }

    /**
     * What a take wrote, or {@link #NONE} when it took nothing.
     *
     * @param consumed whether the take wrote
     * @param where    where the units went
     * @param which    which units they are
     * @return the undo
     */
    public static Undo of(boolean consumed, long where, long which) {
        return consumed ? new Undo(where, which) : NONE;
    }
}
