package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * What the source holds that the reader did not read: a typo fails the deployment, a rule
 * configured but not listed and an environment variable that matches no setting are told as
 * warnings; and a source with no property of ours at all, which the reader explains apart
 * (a settings file in the wrong place) rather than as an empty rule list.
 */
final class UnreadSettings {

    private static final String PREFIX = SettingsReader.PREFIX;

    private UnreadSettings() {
    }

    /** Whether no property of ours is set at all, in the file, the system properties or the environment. */
    static boolean noRateLimitProperty(SettingsSource source) {
        for (String name : source.names()) {
            if (name.regionMatches(true, 0, PREFIX, 0, PREFIX.length())
                    || name.regionMatches(true, 0, "RATELIMIT_", 0, "RATELIMIT_".length())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Names under {@code ratelimit.} that nothing read. A typo in the properties file or a system
     * property fails the deployment. A rule configured but not listed (an environment that runs
     * fewer rules than the file defines) and an environment variable that matches no setting are
     * told as warnings and ignored; an environment variable that is the environment form
     * of a setting read (hyphens included, {@code RATELIMIT_KEY_PREFIX}) is that setting.
     */
    static void report(SettingsValues values, Set<String> listed, Consumer<String> warnings) {
        SettingsSource source = values.source();
        Set<String> readForms = new HashSet<>();
        for (String name : values.read()) {
            readForms.add(SettingsSource.environmentForm(name));
        }
        TreeMap<String, List<String>> unlistedRules = new TreeMap<>();
        Set<String> unknownVariables = new TreeSet<>();
        for (String name : new TreeSet<>(source.names())) {
            if (!name.startsWith(PREFIX) || values.read().contains(name)) {
                continue;
            }
            if (source.fromEnvironment(name)) {
                String variable = SettingsSource.environmentForm(name);
                if (!readForms.contains(variable)) {
                    unknownVariables.add(variable);
                }
                continue;
            }
            String rest = name.substring(PREFIX.length());
            int dot = rest.indexOf('.', "rule.".length());
            if (rest.startsWith("rule.") && dot > 0 && !listed.contains(rest.substring("rule.".length(), dot))) {
                unlistedRules.computeIfAbsent(rest.substring("rule.".length(), dot), k -> new ArrayList<>()).add(name);
            } else {
                values.problems().add(name + " is not a known setting (a typo?)");
            }
        }
        unlistedRules.forEach((rule, names) -> warnings.accept("Rule '" + rule + "' is configured ("
                + String.join(", ", names) + ") but not listed in ratelimit.rules: it is not enforced"));
        if (!unknownVariables.isEmpty()) {
            warnings.accept("Environment variables that match no rate-limit setting are ignored: "
                    + String.join(", ", unknownVariables));
        }
    }
}
