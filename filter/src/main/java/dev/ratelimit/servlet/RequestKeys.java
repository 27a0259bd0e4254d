package dev.ratelimit.servlet;

import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.config.RequestMatcher;
import dev.ratelimit.config.RequestView;
import dev.ratelimit.config.RuleSettings;
import jakarta.servlet.http.HttpServletRequest;

import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The claims a request makes: the rules it falls under, their keys and plans as
 * {@link RequestMatcher} decides them (the code {@code ratelimit explain} runs too), then the
 * application's own limits ({@link LimitProvider}) over them.
 */
final class RequestKeys {

    private final RequestMatcher matcher;
    /** The application's own limits, or null when it provides none. */
    private final ProvidedLimits provided;

    RequestKeys(RequestMatcher matcher, ProvidedLimits provided) {
        this.matcher = matcher;
        this.provided = provided;
    }

    /**
     * A rule that applies to a request and has a key for it.
     *
     * @param settings the rule's settings
     * @param claim    its claim: the rule the caller is held to (its plan's), the key, the cost
     */
    record Matched(RuleSettings settings, Claim claim) {
    }

    /**
     * Matches a request against the rules.
     *
     * @param request the request
     * @param rules   every configured rule
     * @return the rules that apply, with their claims, in the order of the settings
     */
    List<Matched> match(HttpServletRequest request, List<RuleSettings> rules) {
        return claims(matcher.match(new ServletRequestView(request), rules), request.getUserPrincipal());
    }

    /**
     * The claims of an annotated method's call on the rules it names, whatever their URL patterns
     * and methods (the annotation says they apply): each rule that has a key for the call.
     *
     * @param call  the call as the rules see it: its request, if any, and its parameters
     * @param rules the rules the method names
     * @return the rules that have a key, with their claims, in the order given
     */
    List<Matched> named(RequestView call, List<RuleSettings> rules) {
        Supplier<String> address = matcher.lazyClientAddress(call);
        List<RequestMatcher.Match> found = new ArrayList<>(rules.size());
        for (RuleSettings rule : rules) {
            matcher.key(rule, call, address).ifPresent(key -> found.add(
                    new RequestMatcher.Match(rule, key, matcher.planRule(rule, call))));
        }
        return claims(found, call.principal() == null ? null : call::principal);
    }

    private List<Matched> claims(List<RequestMatcher.Match> found, Principal principal) {
        List<Matched> matched = new ArrayList<>(found.size());
        for (RequestMatcher.Match match : found) {
            RuleSettings rule = match.settings();
            Rule applied = match.rule();
            if (provided != null) {
                applied = provided.apply(applied, match.key(), principal, rule.cost());
            }
            matched.add(new Matched(rule, Claim.of(applied, match.key(), rule.cost())));
        }
        return matched;
    }
}
