package dev.ratelimit.jakarta;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The sub-resource locators under a resource class and the methods of the sub-resources they
 * return, followed through their declared return types. Jakarta REST configures a sub-resource's
 * methods only when a request first reaches them: walking them when the root resource is
 * configured lets a wrong annotation fail the deployment rather than that request, and finds a
 * {@link RateLimited} on a locator, which no filter sees (a request is decided by the method it
 * ends at).
 */
final class SubResources {

    private SubResources() {
    }

    /**
     * What lies under a resource class.
     *
     * @param locators        the sub-resource locators found, the class's own included
     * @param resourceMethods the resource methods of the sub-resources they return
     */
    record Found(List<Method> locators, List<Method> resourceMethods) {
    }

    /**
     * Walks a resource class's locators to every sub-resource class they declare.
     *
     * @param root    a resource class
     * @param visited classes walked already (by an earlier call), added to
     * @return the locators and the sub-resources' methods
     */
    static Found under(Class<?> root, Set<Class<?>> visited) {
        List<Method> locators = new ArrayList<>();
        List<Method> methods = new ArrayList<>();
        Deque<Class<?>> types = new ArrayDeque<>();
        Set<Class<?>> seen = new HashSet<>();
        types.add(root);
        while (!types.isEmpty()) {
            Class<?> type = types.poll();
            if (!seen.add(type)) {
                continue;
            }
            for (Method method : type.getMethods()) {
                if (isLocator(method)) {
                    locators.add(method);
                    Class<?> returned = method.getReturnType();
                    // Object or Class: the sub-resource is chosen at run time, and checked when first reached.
                    if (returned != Object.class && returned != Class.class && !returned.isPrimitive()
                            && !visited.contains(returned)) {
                        types.add(returned);
                    }
                } else if (type != root && isResourceMethod(method)) {
                    methods.add(method);
                }
            }
            visited.add(type);
        }
        return new Found(locators, methods);
    }

    /**
     * Whether a method is a sub-resource locator: a {@code @Path} and no HTTP method, on it or on
     * the declaration Jakarta REST inherits its annotations from.
     *
     * @param method any method
     * @return true for a locator
     */
    static boolean isLocator(Method method) {
        Method declared = restDeclaration(method);
        return declared.isAnnotationPresent(Path.class) && !isResourceMethod(declared)
                && !Modifier.isStatic(method.getModifiers());
    }

    private static boolean isResourceMethod(Method method) {
        for (Annotation annotation : restDeclaration(method).getAnnotations()) {
            if (annotation.annotationType().isAnnotationPresent(HttpMethod.class)) {
                return true;
            }
        }
        return false;
    }

    /** The declaration whose Jakarta REST annotations a method inherits: the nearest that has any. */
    private static Method restDeclaration(Method method) {
        return AnnotatedMethod.declaration(method, declared -> declared.getAnnotations().length > 0);
    }
}
