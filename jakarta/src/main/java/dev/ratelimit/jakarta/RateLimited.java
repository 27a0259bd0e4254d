package dev.ratelimit.jakarta;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits a Jakarta REST resource method or a CDI bean method by a rule of the application's
 * settings ({@code ratelimit.rule.<name>.*}: algorithm, limit, window, plans, policy,
 * {@code count-when}...). The rule's {@code key} says what is counted per, as for the filter,
 * with one addition: a {@code param:<name>} part reads the method's parameter of that name, a
 * {@code @PathParam}, {@code @QueryParam} or {@code @FormParam} of a resource method, or a CDI
 * method's parameter by its name (compiled with {@code -parameters}) or its position
 * ({@code param:0}). The rule's {@code match}, {@code exclude} and {@code methods} do not apply:
 * the annotation says where it does.
 *
 * <p>On a class, it limits each of its methods that has none of its own, each method
 * counted apart (the class's interceptor declarations use it so too).
 *
 * <p>Several on one method are one decision, all or nothing, as several rules of one request
 * are. A rule or parameter that does not exist fails the deployment, naming the method.
 */
@Documented
@InterceptorBinding
@Repeatable(RateLimited.List.class)
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface RateLimited {

    /**
     * The rule's name, one of {@code ratelimit.rules}.
     *
     * @return e.g. {@code login}
     */
    @Nonbinding
    String value();

    /**
     * For a CDI method: the exceptions after which the call does not count and its units are
     * given back ({@code Throwable.class}: only a normal return counts). A Jakarta REST method
     * counts by its response's status, as the rule's {@code count-when} or {@code refund-when} says.
     *
     * @return the exception types, none by default
     */
    @Nonbinding
    Class<? extends Throwable>[] giveBackOn() default {};

    /**
     * Several {@link RateLimited} on one method.
     */
    @Documented
    @InterceptorBinding
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    @interface List {

        /**
         * The annotations, in the order written.
         *
         * @return at least two
         */
        @Nonbinding
        RateLimited[] value();
    }
}
