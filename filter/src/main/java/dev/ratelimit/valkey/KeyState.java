package dev.ratelimit.valkey;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A rule's state for one key as Valkey holds it, read without consuming anything: what the
 * limiter would decide now, and the raw state under it. See {@link KeyInspector}.

 *
 * <p>Immutable; made by the limiter's {@link KeyInspector}.
 */
public final class KeyState {

    private final String ruleName;
    private final String algorithm;
    private final String stateKey;
    private final Optional<Decision> decision;
    private final Duration nextUnit;
    private final long leaseUnits;
    private final Duration leaseTime;
    private final String type;
    private final List<String> raw;
    private final long ttlMillis;
    private final Optional<String> unreadable;
    private final boolean shadow;

    private KeyState(String ruleName, String algorithm, String stateKey, Optional<Decision> decision, Duration nextUnit,
                     long leaseUnits, Duration leaseTime, String type, List<String> raw, long ttlMillis,
                     Optional<String> unreadable, boolean shadow) {
        this.ruleName = Objects.requireNonNull(ruleName, "ruleName");
        this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
        this.stateKey = Objects.requireNonNull(stateKey, "stateKey");
        this.decision = Objects.requireNonNull(decision, "decision");
        this.nextUnit = Objects.requireNonNull(nextUnit, "nextUnit");
        this.leaseUnits = leaseUnits;
        this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
        this.type = Objects.requireNonNull(type, "type");
        this.raw = List.copyOf(raw);
        this.ttlMillis = ttlMillis;
        this.unreadable = Objects.requireNonNull(unreadable, "unreadable");
        this.shadow = shadow;
    }

    /**
     * The rule's name.
     *
     * @return the rule's name
     */
    public String ruleName() {
        return ruleName;
    }

    /**
     * The rule's algorithm ({@code concurrency}: the units are leases of requests in progress, and
     * the raw state lists them by when each times out).
     *
     * @return the algorithm
     */
    public String algorithm() {
        return algorithm;
    }

    /**
     * The Valkey key.
     *
     * @return the state key
     */
    public String stateKey() {
        return stateKey;
    }

    /**
     * What a request of the given cost would get now (a peek); empty when the state cannot be read
     * by the rule's algorithm ({@code unreadable} says why).
     *
     * @return the decision
     */
    public Optional<Decision> decision() {
        return decision;
    }

    /**
     * Time until more quota is made available; zero when the quota is full.
     *
     * @return the next unit
     */
    public Duration nextUnit() {
        return nextUnit;
    }

    /**
     * Units this limiter holds in local leases for the key (0 for a limiter of its own, such as the
     * command line's).
     *
     * @return the lease units
     */
    public long leaseUnits() {
        return leaseUnits;
    }

    /**
     * The longest those units are held before what is unused goes back (the rule's {@code
     * local-lease-time}); zero without local leases.
     *
     * @return the lease time
     */
    public Duration leaseTime() {
        return leaseTime;
    }

    /**
     * The Valkey type of the key: {@code string}, {@code hash}, {@code zset} ..., or {@code none}
     * when there is no state (the key is full).
     *
     * @return the type
     */
    public String type() {
        return type;
    }

    /**
     * The raw state, one entry per line: {@code field=value} of a hash, {@code member score} of a
     * sorted set (the first {@value KeyInspector#RAW_ENTRIES} and a count), the value of a string.
     *
     * @return the raw
     */
    public List<String> raw() {
        return raw;
    }

    /**
     * The key's time to live in milliseconds, -1 without one, -2 without a key.
     *
     * @return the ttl millis
     */
    public long ttlMillis() {
        return ttlMillis;
    }

    /**
     * Why the algorithm cannot read the state, or empty.
     *
     * @return the unreadable
     */
    public Optional<String> unreadable() {
        return unreadable;
    }

    /**
     * Whether the rule is a shadow rule: it counts but never refuses, so a key over its limit is
     * not "rejected".
     *
     * @return the shadow
     */
    public boolean shadow() {
        return shadow;
    }

    /** A state the algorithm read: its peek, the local leases held, and the raw state. */
    static KeyState read(Rule rule, String stateKey, Decision decision, Duration nextUnit, long leaseUnits,
                         Duration leaseTime, RawState raw) {
        return new KeyState(rule.name(), rule.algorithm().id(), stateKey, Optional.of(decision), nextUnit, leaseUnits,
                leaseTime, raw.type(), raw.entries(), raw.ttlMillis(), Optional.empty(), rule.shadow());
    }

    /** A state the algorithm cannot read (another writer's value): only the raw state. */
    static KeyState unreadable(Rule rule, String stateKey, String why, RawState raw) {
        return new KeyState(rule.name(), rule.algorithm().id(), stateKey, Optional.empty(), Duration.ZERO, 0,
                Duration.ZERO, raw.type(), raw.entries(), raw.ttlMillis(), Optional.of(why), rule.shadow());
    }

    /**
     * Whether Valkey holds state for the key; without it the key has its whole quota.
     *
     * @return false for type {@code none}
     */
    public boolean exists() {
        return !type.equals("none");
    }

    /**
     * The state in words, one fact per line, as the command line and the rule's MBean print it.
     *
     * @return lines without a trailing line break
     */
    public String describe() {
        StringBuilder text = new StringBuilder();
        text.append("rule ").append(ruleName).append(", Valkey key ").append(stateKey).append('\n');
        decision.ifPresent(d -> {
            text.append("  ").append(d.allowed() ? "allowed now" : verdict(d.retryAfter()))
                    .append(": ").append(d.remaining()).append(" of ").append(d.limit()).append(" remaining\n");
            if (algorithm.equals(Algorithm.CONCURRENCY.id())) {
                long held = d.limit() - d.remaining();
                text.append("  ").append(held).append(" lease(s) of requests in progress")
                        .append(held == 0 ? "" : ": the first times out in " + words(nextUnit) + ", the last in "
                                + words(d.resetAfter()) + " (sooner when released)").append('\n');
            } else {
                text.append("  next unit ").append(nextUnit.isZero() ? "none due (full)" : "in " + words(nextUnit))
                        .append(", full again ").append(d.resetAfter().isZero() ? "now" : "in " + words(d.resetAfter()))
                        .append('\n');
            }
        });
        unreadable.ifPresent(why -> text.append("  unreadable by the rule's algorithm: ").append(why).append('\n'));
        if (leaseUnits > 0) {
            text.append("  local leases of this instance hold ").append(leaseUnits)
                    .append(" unit(s), the unused ones given back within ").append(words(leaseTime)).append('\n');
        }
        text.append("  state: ").append(exists() ? type : "none (the key is full)");
        text.append(ttlMillis >= 0 ? ", expires in " + words(Duration.ofMillis(ttlMillis))
                : ttlMillis == -1 ? ", no expiry" : "");
        raw.forEach(entry -> text.append("\n    ").append(entry));
        return text.toString();
    }

    /** A refusal in words: a shadow rule's requests pass, so it is said as over the limit. */
    private String verdict(Duration retryAfter) {
        return shadow ? "over the limit now, yet allowed: a shadow rule only counts (it would say retry after "
                + words(retryAfter) + ")" : "rejected now, retry after " + words(retryAfter);
    }

    /**
     * A duration as people read it, as {@link #describe()} and the command line's tables say them.
     *
     * @param d a duration
     * @return e.g. {@code 850 ms}, {@code 12.4 s}, {@code 3 min 20 s}, {@code 2 h 5 min}
     */
    public static String words(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + " ms";
        }
        if (ms < 60_000) {
            return String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
        }
        long s = (ms + 999) / 1000;
        return s < 3600 ? s / 60 + " min " + s % 60 + " s" : s / 3600 + " h " + s % 3600 / 60 + " min";
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof KeyState k && ruleName.equals(k.ruleName) && algorithm.equals(k.algorithm)
                && stateKey.equals(k.stateKey) && decision.equals(k.decision) && nextUnit.equals(k.nextUnit)
                && leaseUnits == k.leaseUnits && leaseTime.equals(k.leaseTime) && type.equals(k.type)
                && raw.equals(k.raw) && ttlMillis == k.ttlMillis && unreadable.equals(k.unreadable)
                && shadow == k.shadow;
    }

    @Override
    public int hashCode() {
        return Objects.hash(ruleName, algorithm, stateKey, decision, nextUnit, leaseUnits, leaseTime, type, raw,
                ttlMillis, unreadable, shadow);
    }

    @Override
    public String toString() {
        return "KeyState[rule=" + ruleName + ", stateKey=" + stateKey + ", decision=" + decision + ", type=" + type
                + ", ttlMillis=" + ttlMillis + "]";
    }

    /** The raw state of a key as read by {@code TYPE}, a read of its value and {@code PTTL}. */
    record RawState(String type, List<String> entries, long ttlMillis) {
    }
}
