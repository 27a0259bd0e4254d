package dev.ratelimit.local;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

/**
 * The in-process twin of {@code fixed-window.lua}: the units counted in the window that ends
 * at {@code ends}; they weigh until then, whatever the rule's window is now. The count's
 * generation is the call that started it: it goes on while the count does, so a refund finds
 * its units only in a count of its own generation.
 */
final class FixedWindowState implements KeyState {

    private long ends = Long.MIN_VALUE;
    private long count;
    private long generation;

    @Override
    public Verdicts.Answer take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected,
                        long call) {
        // The end of the window holding now: aligned to the epoch, or the calendar period's (as
        // fixed-window.lua has it).
        long window = rule.window().toMillis();
        long stop = rule.calendar() != null ? rule.calendar().period(now).end()
                : now - Math.floorMod(now, window) + window;
        long current = 0;
        long end = 0;
        boolean live = now < ends;
        if (live) {
            current = count;
            end = ends;
        }

        boolean allowed = current + cost <= rule.limit();
        boolean consume = allowed ? consumeIfAllowed : consumeIfRejected;
        if (consume) {
            // The count goes on whole (an edited window only moves its end), so its generation does.
            generation = live && current > 0 ? generation : call;
            current += cost;
            end = stop;
            count = current;
            ends = end;
        }
        long resetAfter = current > 0 ? end - now : 0;
        // Units come back only when the window ends; with nothing counted, the aligned one ends then.
        // A count kept from a rule of another window ends at its own end, unless a write moves
        // it to this window's end first: the sooner of the two while a unit can still be taken or
        // an attempt is recorded (see the Lua file); otherwise its own end.
        long next = (current <= 0 ? stop
                : current >= rule.limit() && !rule.countRejected() ? end : Math.min(end, stop)) - now;
        long wait = current + cost > rule.limit() ? end - now : 0;
        return new Verdicts.Answer(allowed, Math.max(0, rule.limit() - current), resetAfter, next, wait, Undo.of(consume, end, generation));
    }

    @Override
    public boolean refund(long now, Rule rule, long cost, Verdicts.Answer taken) {
        Undo undo = taken.undo();
        long chargedEnd = undo.where();
        long chargedGeneration = undo.which();
        // A window that has ended, or was replaced by another, is not touched; nor a count
        // started since the units were taken: they are not among it.
        if (ends != chargedEnd || generation != chargedGeneration || now >= ends) {
            return false;
        }
        count = Math.max(0, count - cost);
        return true;
    }

    @Override
    public long expiresAt() {
        return ends;
    }
}
