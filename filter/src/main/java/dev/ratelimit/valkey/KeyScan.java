package dev.ratelimit.valkey;

import java.util.List;

/**
 * What {@link KeyInspector#scan} found: the keys nearest their limit, in full.
 *
 * @param nearest  rejected first, then by fewest remaining; states the rule's algorithm cannot
 *                 read before all
 * @param keysSeen how many keys were looked at
 * @param complete whether those were all of the rule's keys (false: a bound stopped the scan)
 */
public record KeyScan(List<KeyState> nearest, int keysSeen, boolean complete) {

    /**
     * Copies the list.
     *
     * @throws NullPointerException without a list
     */
    public KeyScan {
        nearest = List.copyOf(nearest);
    }
}
