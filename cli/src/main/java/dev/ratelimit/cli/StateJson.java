package dev.ratelimit.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import dev.ratelimit.valkey.KeyState;

import java.util.LinkedHashMap;
import java.util.Map;

/** States as JSON for scripts: durations in milliseconds, names as in the text. */
final class StateJson {

    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private StateJson() {
    }

    /** One state as a JSON object's fields. */
    static Map<String, Object> of(KeyState state) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("rule", state.ruleName());
        json.put("algorithm", state.algorithm());
        json.put("valkeyKey", state.stateKey());
        json.put("exists", state.exists());
        state.decision().ifPresent(d -> {
            json.put("allowed", d.allowed());
            json.put("shadow", state.shadow());
            json.put("limit", d.limit());
            json.put("remaining", d.remaining());
            json.put("retryAfterMs", d.retryAfter().toMillis());
            json.put("nextUnitMs", state.nextUnit().toMillis());
            json.put("fullAfterMs", d.resetAfter().toMillis());
        });
        state.unreadable().ifPresent(why -> json.put("unreadable", why));
        json.put("leaseUnits", state.leaseUnits());
        json.put("leaseTimeMs", state.leaseTime().toMillis());
        json.put("type", state.type());
        json.put("ttlMs", state.ttlMillis());
        json.put("raw", state.raw());
        return json;
    }

    /** A JSON object on one line. */
    static String write(Map<String, Object> json) {
        return GSON.toJson(json);
    }
}
