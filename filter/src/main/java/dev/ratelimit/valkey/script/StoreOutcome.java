package dev.ratelimit.valkey.script;

import dev.ratelimit.Decisions;
import dev.ratelimit.internal.Verdicts;

import java.util.List;

/**
 * What the store answered a request: its decisions, and every claim's answer (what each wrote,
 * to give it back), in the order of the request's claims.
 *
 * @param decisions the request's decisions
 * @param answers   each claim's answer
 */
public record StoreOutcome(Decisions decisions, List<Verdicts.Answer> answers) {
}
