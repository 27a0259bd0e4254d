package dev.ratelimit.it.checker;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A workload's steps written down and read back: each {@link Op} as one JSON object (a kept
 * workload is one per line, so it can be replayed), and as a line a person reads (a shrunk
 * workload is printed so).
 */
final class Steps {

    private Steps() {
    }

    /**
     * A step as JSON: {@code "step"} names the kind, the other fields are the record's.
     *
     * @param op the step
     * @return its object
     */
    static Json json(Op op) {
        if (op instanceof Op.Take take) {
            return step("take").with("reserve", take.reserve()).with("claims", take.claims().stream().map(Steps::claim).toList());
        } else if (op instanceof Op.Peek peek) {
            return step("peek").with("claim", claim(peek.claim()));
        } else if (op instanceof Op.Settle settle) {
            Json json = step("settle").with("pick", settle.pick()).with("how", settle.how()).with("rule", settle.rule());
            return settle.actual() < 0 ? json : json.with("actual", settle.actual());
        } else if (op instanceof Op.Advance advance) {
            return step("advance").with("how", advance.how()).with("amount", advance.amount()).with("rule", advance.rule());
        } else if (op instanceof Op.Retry) {
            return step("retry");
        } else if (op instanceof Op.Edit edit) {
            return step("edit").with("rule", edit.rule()).with("limit", edit.limit()).with("windowMs", edit.windowMs())
                    .with("burst", edit.burst()).with("calendar", edit.calendar());
        } else if (op instanceof Op.Reset reset) {
            return step("reset").with("claim", claim(reset.claim()));
        } else if (op instanceof Op.OperatorReset reset) {
            return step("operator-reset").with("claim", claim(reset.claim()));
        } else if (op instanceof Op.Inspect inspect) {
            return step("inspect").with("claim", claim(inspect.claim()));
        } else if (op instanceof Op.Stall stall) {
            return step("stall").with("millis", stall.millis()).with("during", stall.during().stream().map(Steps::json).toList())
                    .with("after", stall.after().stream().map(Steps::json).toList());
        } else if (op instanceof Op.Failover failover) {
            return step("failover").with("during", failover.during().stream().map(Steps::json).toList())
                    .with("probe", claim(failover.probe()));
        } else if (op instanceof Op.Probe probe) {
            return step("probe").with("claim", claim(probe.claim()));
        } else if (op instanceof Op.Flush) {
            return step("flush");
        } else if (op instanceof Op.Plant plant) {
            return step("plant").with("rule", plant.rule()).with("key", plant.key());
        } else if (op instanceof Op.Unplant unplant) {
            return step("unplant").with("rule", unplant.rule()).with("key", unplant.key());
        } else if (op instanceof Op.Restart) {
            return step("restart");
        } else if (op instanceof Op.ClientErrors errors) {
            return step("client-errors").with("count", errors.count());
        } else if (op instanceof Op.Burst burst) {
            return step("burst").with("resets", burst.resets()).with("errors", burst.errors())
                    .with("during", burst.during().stream().map(Steps::json).toList());
        } else if (op instanceof Op.Crowd crowd) {
            return step("crowd").with("millis", crowd.millis()).with("threads", crowd.threads())
                    .with("peeks", crowd.peeks().stream().map(Steps::claim).toList());
        }
        throw new IllegalArgumentException("step: unknown kind " + op);
    }

    /**
     * A step read back from {@link #json(Op)}.
     *
     * @param fields the object's fields
     * @return the step
     * @throws IllegalArgumentException naming the field, when one is missing or unknown
     */
    static Op op(Map<String, Object> fields) {
        String kind = text(fields, "step");
        return switch (kind) {
            case "take" -> new Op.Take(bool(fields, "reserve"), list(fields, "claims").stream().map(Steps::claim).toList());
            case "peek" -> new Op.Peek(claim(get(fields, "claim")));
            case "settle" -> new Op.Settle((int) number(fields, "pick"), text(fields, "how"), (int) number(fields, "rule"),
                    fields.containsKey("actual") ? number(fields, "actual") : -1);
            case "advance" -> new Op.Advance(text(fields, "how"), ((Number) get(fields, "amount")).doubleValue(),
                    (int) number(fields, "rule"));
            case "retry" -> new Op.Retry();
            case "edit" -> new Op.Edit((int) number(fields, "rule"), number(fields, "limit"), number(fields, "windowMs"),
                    number(fields, "burst"), (String) fields.get("calendar"));
            case "reset" -> new Op.Reset(claim(get(fields, "claim")));
            case "operator-reset" -> new Op.OperatorReset(claim(get(fields, "claim")));
            case "inspect" -> new Op.Inspect(claim(get(fields, "claim")));
            case "stall" -> new Op.Stall(number(fields, "millis"), steps(list(fields, "during")), steps(list(fields, "after")));
            case "failover" -> new Op.Failover(steps(list(fields, "during")), claim(get(fields, "probe")));
            case "probe" -> new Op.Probe(claim(get(fields, "claim")));
            case "flush" -> new Op.Flush();
            case "plant" -> new Op.Plant((int) number(fields, "rule"), text(fields, "key"));
            case "unplant" -> new Op.Unplant((int) number(fields, "rule"), text(fields, "key"));
            case "restart" -> new Op.Restart();
            case "client-errors" -> new Op.ClientErrors((int) number(fields, "count"));
            case "burst" -> new Op.Burst((int) number(fields, "resets"), (int) number(fields, "errors"),
                    steps(list(fields, "during")));
            case "crowd" -> new Op.Crowd(number(fields, "millis"), (int) number(fields, "threads"),
                    list(fields, "peeks").stream().map(Steps::claim).toList());
            default -> throw new IllegalArgumentException("step: unknown kind '" + kind + "' in " + fields);
        };
    }

    /**
     * A step as a person reads it; a stall's steps follow on indented lines.
     *
     * @param op the step
     * @return one or more lines
     */
    static List<String> lines(Op op) {
        if (op instanceof Op.Stall stall) {
            List<String> lines = new ArrayList<>();
            lines.add("stall Valkey " + stall.millis() + " ms, sending meanwhile:");
            stall.during().forEach(s -> lines(s).forEach(l -> lines.add("    " + l)));
            lines.add("  then, " + Runner.AFTER_STALL_PAUSE_MILLIS + " ms apart:");
            stall.after().forEach(s -> lines(s).forEach(l -> lines.add("    " + l)));
            return lines;
        }
        if (op instanceof Op.Failover failover) {
            List<String> lines = new ArrayList<>();
            lines.add("Sentinel failover, sending again and again until the sentinels name the new primary:");
            failover.during().forEach(s -> lines(s).forEach(l -> lines.add("    " + l)));
            lines.add("  then the old primary made a replica, and each instance's store peeks at "
                    + words(failover.probe()) + " until the new primary answers");
            return lines;
        }
        if (op instanceof Op.Burst burst) {
            List<String> lines = new ArrayList<>();
            lines.add("on instance 0: " + burst.resets() + " connection resets, then " + burst.errors()
                    + " Errors from its client, meanwhile:");
            burst.during().forEach(s -> lines(s).forEach(l -> lines.add("    " + l)));
            lines.add("  then wait out its breaker's open period");
            return lines;
        }
        return List.of(line(op));
    }

    private static String line(Op op) {
        if (op instanceof Op.Take take) {
            return (take.reserve() ? "reserve " : "acquire ") + String.join(", ",
                    take.claims().stream().map(Steps::words).toList());
        } else if (op instanceof Op.Peek peek) {
            return "peek " + words(peek.claim());
        } else if (op instanceof Op.Settle s) {
            return "settle the " + (s.pick() < 0 ? "latest" : "(" + s.pick() + " mod pending)-th") + " reservation: "
                    + s.how() + (s.how().equals("cancel-one") ? " r" + s.rule() : "")
                    + (s.how().equals("commit-cost") ? " " + s.actual() : "");
        } else if (op instanceof Op.Advance a) {
            return "clock " + switch (a.how()) {
                case "zero" -> "+0 ms";
                case "one" -> "+1 ms";
                case "fraction" -> "+" + a.amount() + " of r" + a.rule() + "'s window";
                case "windows" -> "+" + (long) a.amount() + " of r" + a.rule() + "'s windows";
                case "retry" -> "to the last rejection's retry-after";
                default -> "to 1 ms before the last rejection's retry-after";
            };
        } else if (op instanceof Op.Retry) {
            return "retry the last rejected call";
        } else if (op instanceof Op.Edit e) {
            return "edit r" + e.rule() + ": limit " + e.limit() + ", window " + e.windowMs() + " ms, burst " + e.burst();
        } else if (op instanceof Op.Reset reset) {
            return "reset " + words(reset.claim());
        } else if (op instanceof Op.OperatorReset reset) {
            return "an operator resets " + words(reset.claim()) + " (ratelimit reset)";
        } else if (op instanceof Op.Inspect inspect) {
            return "an operator inspects " + words(inspect.claim()) + " (ratelimit inspect)";
        } else if (op instanceof Op.Probe probe) {
            return "probe " + words(probe.claim()) + " (reserve, cancel at once)";
        } else if (op instanceof Op.Flush) {
            return "FUNCTION FLUSH";
        } else if (op instanceof Op.Plant p) {
            return "plant an unreadable state for r" + p.rule() + "/" + p.key();
        } else if (op instanceof Op.Unplant u) {
            return "delete the planted state of r" + u.rule() + "/" + u.key();
        } else if (op instanceof Op.Restart) {
            return "restart Valkey (every state may be gone)";
        } else if (op instanceof Op.ClientErrors errors) {
            return "the next " + errors.count() + " commands of the next instance's client throw an Error";
        } else if (op instanceof Op.Crowd crowd) {
            return "stall Valkey " + crowd.millis() + " ms while " + crowd.threads() + " threads peek at "
                    + String.join(", ", crowd.peeks().stream().map(Steps::words).toList()) + " on instance 0";
        }
        throw new IllegalArgumentException("step: unknown kind " + op);
    }

    /** A claim as "r2/a×3" ({@code ×cap}: the rule's capacity). */
    private static String words(Op.ClaimSpec claim) {
        return "r" + claim.rule() + "/" + claim.key() + "×" + (claim.cost() == 0 ? "cap" : String.valueOf(claim.cost()));
    }

    private static Json step(String kind) {
        return Json.object().with("step", kind);
    }

    private static Json claim(Op.ClaimSpec claim) {
        return Json.object().with("rule", claim.rule()).with("key", claim.key()).with("cost", claim.cost());
    }

    @SuppressWarnings("unchecked")
    private static Op.ClaimSpec claim(Object value) {
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("step: a claim must be an object, not " + value);
        }
        Map<String, Object> fields = (Map<String, Object>) value;
        return new Op.ClaimSpec((int) number(fields, "rule"), text(fields, "key"), number(fields, "cost"));
    }

    @SuppressWarnings("unchecked")
    private static List<Op> steps(List<Object> values) {
        return values.stream().map(v -> op((Map<String, Object>) v)).toList();
    }

    private static Object get(Map<String, Object> fields, String name) {
        if (!fields.containsKey(name)) {
            throw new IllegalArgumentException("step: field '" + name + "' missing in " + fields);
        }
        return fields.get(name);
    }

    private static String text(Map<String, Object> fields, String name) {
        return String.valueOf(get(fields, name));
    }

    private static long number(Map<String, Object> fields, String name) {
        return ((Number) get(fields, name)).longValue();
    }

    private static boolean bool(Map<String, Object> fields, String name) {
        return (Boolean) get(fields, name);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> fields, String name) {
        return (List<Object>) get(fields, name);
    }
}
