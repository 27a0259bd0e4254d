package dev.ratelimit.config;

import java.util.Optional;
import java.util.Set;

/**
 * Where settings come from: MicroProfile Config in a deployment, a map in tests. A small
 * interface so the reader need not know which.
 */
public interface SettingsSource {

    /**
     * A property's value.
     *
     * @param name e.g. {@code ratelimit.rule.api.limit}
     * @return the value, or empty when unset
     */
    Optional<String> get(String name);

    /**
     * Every property name this source knows, for reporting unknown {@code ratelimit.*} names
     * (usually typos).
     *
     * @return the names
     */
    Set<String> names();

    /**
     * Whether a name comes from the process environment, where MicroProfile Config maps a
     * variable such as {@code RATELIMIT_KEY_PREFIX} to a name with a dot for every underscore
     * ({@code ratelimit.key.prefix}): such a name is not a typo of the file, it is the
     * environment form of a setting (hyphens included) or a variable meant for another version.
     *
     * @param name a name from {@link #names()}
     * @return true when it stands for an environment variable
     */
    default boolean fromEnvironment(String name) {
        return false;
    }

    /**
     * Where this source looked for settings, said when it found none at all: a settings file in
     * the wrong place is the usual cause.
     *
     * @return one sentence
     */
    default String whereLooked() {
        return "the settings given";
    }

    /**
     * The environment-variable form MicroProfile Config gives a property name: every character
     * other than a letter or digit becomes {@code _}, and letters are upper-cased.
     *
     * @param name e.g. {@code ratelimit.rule.login-user.on-failure}
     * @return e.g. {@code RATELIMIT_RULE_LOGIN_USER_ON_FAILURE}
     */
    static String environmentForm(String name) {
        StringBuilder form = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            form.append(c < 128 && Character.isLetterOrDigit(c) ? Character.toUpperCase(c) : '_');
        }
        return form.toString();
    }
}
