package dev.ratelimit.servlet;

import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.RuleSettings;

import java.util.List;

/**
 * One reading of the settings as an annotated method's check sees it ({@link RateLimits.Reading}):
 * at the application's start, and at each refresh.
 *
 * @param settings the settings read
 */
record SettingsReading(FilterSettings settings) implements RateLimits.Reading {

    /** The reading of these settings. */
    static SettingsReading of(FilterSettings settings) {
        return new SettingsReading(settings);
    }

    @Override
    public boolean enabled() {
        return settings.enabled();
    }

    @Override
    public List<String> rules() {
        return settings.rules().stream().map(r -> r.rule().name()).toList();
    }

    @Override
    public List<String> keyParts(String rule) {
        return named(rule).key().parts().stream().map(KeySpec.Part::text).toList();
    }

    @Override
    public boolean methodRule(String rule) {
        return named(rule).scope() == RuleSettings.Scope.METHOD;
    }

    private RuleSettings named(String rule) {
        return settings.rule(rule)
                .orElseThrow(() -> new IllegalArgumentException("no rule '" + rule + "' in ratelimit.rules " + rules()));
    }
}
