package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.RateLimits;

import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A method's {@link RateLimited} annotations, read once: the rules it names, its parameters'
 * names, and the exceptions after which a CDI call is given back.
 *
 * @param method     the method
 * @param rules      the rules' names, in the order written
 * @param parameters its parameters
 * @param giveBackOn the exception types after which a CDI call does not count
 */
record AnnotatedMethod(Method method, List<String> rules, MethodParameters parameters,
                       List<Class<? extends Throwable>> giveBackOn) {

    /** Copies the lists. */
    AnnotatedMethod {
        rules = List.copyOf(rules);
        giveBackOn = List.copyOf(giveBackOn);
    }

    /**
     * Reads a method's annotations.
     *
     * @param method a method with at least one {@link RateLimited}, or of a class with one
     * @return what they say
     */
    static AnnotatedMethod of(Method method) {
        List<String> rules = new ArrayList<>();
        List<Class<? extends Throwable>> giveBackOn = new ArrayList<>();
        RateLimited[] annotations = method.getAnnotationsByType(RateLimited.class);
        if (annotations.length == 0) {
            annotations = method.getDeclaringClass().getAnnotationsByType(RateLimited.class);
        }
        for (RateLimited limited : annotations) {
            rules.add(limited.value());
            giveBackOn.addAll(Arrays.asList(limited.giveBackOn()));
        }
        return new AnnotatedMethod(method, rules, MethodParameters.of(method), giveBackOn);
    }

    /**
     * Whether the method itself carries {@link RateLimited} (not only its class).
     *
     * @param method any method
     * @return true with one of its own
     */
    static boolean ownAnnotation(Method method) {
        return method.getAnnotationsByType(RateLimited.class).length > 0;
    }

    /**
     * Whether the method is annotated at all.
     *
     * @param method any method
     * @return true with one {@link RateLimited} or more, its own or its class's
     */
    static boolean isAnnotated(Method method) {
        return method.getAnnotationsByType(RateLimited.class).length > 0
                || method.getDeclaringClass().getAnnotationsByType(RateLimited.class).length > 0;
    }

    /**
     * Where a resource method's {@link RateLimited} is written: on the method, or, as Jakarta REST
     * inherits a method's annotations, on the method it overrides or implements (a generated API
     * interface), the nearest superclass first, then the interfaces.
     *
     * @param method a resource method as Jakarta REST gives it
     * @return the annotated declaration, or the method itself when none is
     */
    static Method restDeclaration(Method method) {
        return declaration(method, AnnotatedMethod::isAnnotated);
    }

    /**
     * The nearest declaration of a method that has something, as Jakarta REST looks for a method's
     * annotations: the method, the method it overrides in the nearest superclass first, then
     * those it implements in the interfaces.
     *
     * @param method any method
     * @param has    what the declaration must have
     * @return the declaration, or the method itself when none has it
     */
    static Method declaration(Method method, Predicate<Method> has) {
        if (has.test(method)) {
            return method;
        }
        Deque<Class<?>> types = new ArrayDeque<>();
        types.add(method.getDeclaringClass());
        while (!types.isEmpty()) {
            Class<?> type = types.poll();
            if (type != method.getDeclaringClass()) {
                try {
                    Method declared = type.getDeclaredMethod(method.getName(), method.getParameterTypes());
                    if (has.test(declared)) {
                        return declared;
                    }
                } catch (NoSuchMethodException e) {
                    // not declared here: its supertypes may
                }
            }
            if (type.getSuperclass() != null) {
                types.add(type.getSuperclass());
            }
            types.addAll(Arrays.asList(type.getInterfaces()));
        }
        return method;
    }

    /**
     * Checks the annotations against the settings: each rule exists, and each {@code param:}
     * part of its key names a parameter of the method. Nothing, when the limits are switched off
     * ({@code ratelimit.enabled=false}): the kill switch must let the application deploy whatever
     * the rest of the settings say.
     *
     * @param limits the application's limits, or a reading of its settings a refresh made
     * @param rest   whether the method is checked as a Jakarta REST one: its entity parameter
     *               cannot key a rule (it is read after the decision)
     * @throws IllegalStateException naming the method and the value, for the deployment's failure
     */
    void check(RateLimits.Reading limits, boolean rest) {
        if (SubResources.isLocator(method)) {
            if (ownAnnotation(method)) {
                throw new IllegalStateException("@RateLimited on " + name() + ", a sub-resource locator: a request is "
                        + "decided by the resource method it ends at, so put @RateLimited on the sub-resource's "
                        + "methods (or its class)");
            }
            // Its class's annotation limits the class's resource methods, not its locators.
            return;
        }
        if (!limits.enabled()) {
            // The kill switch lets every call through and reads no rule: no annotation can be wrong.
            return;
        }
        for (String rule : rules) {
            if (!limits.rules().contains(rule)) {
                throw new IllegalStateException("@RateLimited(\"" + rule + "\") on " + name()
                        + " names no rule of ratelimit.rules " + limits.rules());
            }
            if (!limits.methodRule(rule)) {
                throw new IllegalStateException("@RateLimited(\"" + rule + "\") on " + name() + " names a route rule, "
                        + "which the filter applies to the requests its match selects (ratelimit.rule." + rule
                        + ".scope=route, the default): set ratelimit.rule." + rule + ".scope=method to apply it "
                        + "where @RateLimited names it, and only there, or name another rule");
            }
            for (String part : limits.keyParts(rule)) {
                if (!part.startsWith("param:")) {
                    continue;
                }
                String name = part.substring("param:".length());
                List<MethodParameters.Named> all = parameters.allNamed(name, rest);
                if (all.size() > 1) {
                    throw new IllegalStateException("@RateLimited(\"" + rule + "\") on " + name() + ": the rule's key "
                            + "part " + part + " (ratelimit.rule." + rule + ".key) names " + all.size() + " parameters of "
                            + "the method (parameters " + all.stream().map(p -> Integer.toString(p.position())).distinct()
                            .toList() + ": one's Jakarta REST name is another's own name), so a request could choose "
                            + "the key by the other; rename one, or key by position (param:0)");
                }
                Optional<MethodParameters.Named> named = all.stream().findFirst();
                if (named.isEmpty()) {
                    throw new IllegalStateException("@RateLimited(\"" + rule + "\") on " + name() + ": the rule's key "
                            + "part " + part + " (ratelimit.rule." + rule + ".key) names no parameter of the method; "
                            + "it has " + parameters.names(rest) + namesHint());
                }
                if (!ReceivedText.keyable(named.get().type())) {
                    throw new IllegalStateException("@RateLimited(\"" + rule + "\") on " + name() + ": the rule's key "
                            + "part " + part + " (ratelimit.rule." + rule + ".key) names a parameter of type "
                            + named.get().type().getName() + ", whose toString does not say its value (each call "
                            + "would get a key of its own): key by a parameter that does, or give the type a toString");
                }
            }
        }
    }

    /**
     * A hint for a name not found: the parameters' own names are known only when the class was
     * compiled with {@code -parameters}.
     */
    private String namesHint() {
        boolean named = Arrays.stream(method.getParameters()).allMatch(java.lang.reflect.Parameter::isNamePresent);
        return named || method.getParameterCount() == 0 ? ""
                : " (its parameters' own names are known only when compiled with -parameters; or use param:0, param:1...)";
    }

    /**
     * Whether the method is a sub-resource locator limited by its class's annotation only,
     * which limits the class's resource methods, not its locators.
     *
     * @return true for such a locator
     */
    boolean classLevelOnLocator() {
        return SubResources.isLocator(method) && !ownAnnotation(method);
    }

    /**
     * Whether a CDI call that threw this is given back.
     *
     * @param thrown what the method threw
     * @return true when it is one of {@link RateLimited#giveBackOn()}
     */
    boolean givesBack(Throwable thrown) {
        return giveBackOn.stream().anyMatch(type -> type.isInstance(thrown));
    }

    /** The method as a message names it: {@code Class.method}. */
    String name() {
        return method.getDeclaringClass().getName() + "." + method.getName();
    }
}
