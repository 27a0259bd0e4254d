package dev.ratelimit.it.checker;

/**
 * An invariant the history breaks.
 *
 * @param invariant which promise, in words
 * @param message   what happened, with the numbers
 * @param op        the operation that broke it
 * @param domain    "store" (the shared store) or "local" (the in-process fallback of a local policy)
 * @param rule      the rule's name
 * @param key       the key
 * @param from      client ms where the interval that shows it starts
 * @param to        client ms where it ends
 */
record Violation(String invariant, String message, long op, String domain, String rule, String key, long from,
                 long to) {

    @Override
    public String toString() {
        return invariant + "\n  op " + op + ", " + domain + " rule " + rule + " key " + key + ": " + message;
    }
}
