package dev.ratelimit.valkey;

import dev.ratelimit.Claim;
import dev.ratelimit.Decisions;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.script.ScriptMode;
import dev.ratelimit.valkey.script.StoreOutcome;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A request's claims on a cluster, whose keys may hash to different slots: one function call
 * cannot span slots, so the claims are decided per slot group, first all read-only, then, if
 * every group allows, one acquiring call per group. When one rejects, the groups holding
 * count-rejected rules record the attempt in a pass that can never turn the rejection into an
 * allow: a request is allowed only if every group allowed and was charged.
 */
final class SlotGroups {

    /** One function call for one group. */
    @FunctionalInterface
    interface GroupCall {
        List<Verdicts.Answer> call(List<Claim> group, ScriptMode mode);
    }

    private SlotGroups() {
    }

    /**
     * The claims of a request whose keys share a slot: where they stand in the request, in order.
     *
     * @param positions the claims' indexes in the request
     */
    record Group(List<Integer> positions) {

        /** Every claim of a request of {@code size} claims: the one group off a cluster. */
        static Group all(int size) {
            return new Group(java.util.stream.IntStream.range(0, size).boxed().toList());
        }

        /** The group's items of a list aligned with the request's claims. */
        <T> List<T> of(List<T> request) {
            return Claims.pick(request, positions);
        }

        /** Puts the group's values, in its order, at their places in the request's. */
        <T> void place(List<T> ofGroup, T[] request) {
            for (int j = 0; j < positions.size(); j++) {
                request[positions.get(j)] = ofGroup.get(j);
            }
        }

        /** Puts the group's values, in its order, at their places in the request's. */
        void place(boolean[] ofGroup, boolean[] request) {
            for (int j = 0; j < positions.size(); j++) {
                request[positions.get(j)] = ofGroup[j];
            }
        }

        /** Puts the group's values, in its order, at their places in the request's. */
        void place(long[] ofGroup, long[] request) {
            for (int j = 0; j < positions.size(); j++) {
                request[positions.get(j)] = ofGroup[j];
            }
        }
    }

    /** The claims grouped by the cluster slot of their state key, in order of appearance. */
    static List<Group> of(List<Claim> claims, Function<Claim, String> stateKey) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < claims.size(); i++) {
            int slot = JedisClusterCRC16.getSlot(stateKey.apply(claims.get(i)));
            bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(i);
        }
        return bySlot.values().stream().map(Group::new).toList();
    }

    /** Gives back, best effort, what claims took (their answers say what each wrote). */
    @FunctionalInterface
    interface GiveBack {
        void giveBack(List<Claim> claims, List<Verdicts.Answer> answers);
    }

    /**
     * Decides claims spread over several slot groups. When a group's acquiring call fails, the
     * groups that had already taken their units give them back before the failure is thrown:
     * the request is then decided by the rules' failure policies, and must hold nothing.
     */
    static StoreOutcome acquire(List<Claim> claims, List<Group> groups, GroupCall call, GiveBack giveBack) {
        Verdicts.Answer[] answers = new Verdicts.Answer[claims.size()];
        boolean allAllowed = true;
        for (Group group : groups) {
            List<Claim> claimsOfGroup = group.of(claims);
            allAllowed &= Verdicts.combine(claimsOfGroup, call.call(claimsOfGroup, ScriptMode.PEEK), false).allowed();
        }
        for (Group group : groups) {
            List<Claim> claimsOfGroup = group.of(claims);
            if (allAllowed) {
                try {
                    group.place(call.call(claimsOfGroup, ScriptMode.ACQUIRE), answers);
                } catch (RuntimeException e) {
                    giveBackTaken(claims, answers, giveBack);
                    throw e;
                }
            } else {
                // Rejected: groups with count-rejected rules record the attempt; the others only
                // tell their state. Neither pass can turn the rejection into an allow.
                boolean records = claimsOfGroup.stream().anyMatch(c -> c.rule().countRejected());
                group.place(call.call(claimsOfGroup, records ? ScriptMode.RECORD_REJECTION : ScriptMode.PEEK), answers);
            }
        }
        List<Verdicts.Answer> all = List.of(answers);
        return new StoreOutcome(Verdicts.combine(claims, all, !allAllowed), all);
    }

    private static void giveBackTaken(List<Claim> claims, Verdicts.Answer[] answers, GiveBack giveBack) {
        List<Claim> taken = new ArrayList<>();
        List<Verdicts.Answer> undo = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            if (answers[i] != null && answers[i].took()) {
                taken.add(claims.get(i));
                undo.add(answers[i]);
            }
        }
        if (!taken.isEmpty()) {
            giveBack.giveBack(taken, undo);
        }
    }

}
