package dev.ratelimit.jakarta;

import jakarta.enterprise.inject.spi.AnnotatedMethod;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.WithAnnotations;
import jakarta.enterprise.event.Observes;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Collects the {@link RateLimited} methods of the application's beans while the container
 * discovers them, so that {@link RateLimitedMethods} checks them all against the settings when
 * the application starts: an unknown rule or parameter fails the deployment, not a first call.
 */
public class RateLimitedExtension implements Extension {

    private final List<Method> methods = new CopyOnWriteArrayList<>();

    /** An extension; the container makes it (a {@code META-INF/services} entry). */
    public RateLimitedExtension() {
    }

    /**
     * Notes the annotated methods of a discovered type.
     *
     * @param type a type with {@link RateLimited} somewhere
     * @param <T>  the type
     */
    <T> void found(@Observes @WithAnnotations({RateLimited.class, RateLimited.List.class})
                   ProcessAnnotatedType<T> type) {
        for (AnnotatedMethod<? super T> method : type.getAnnotatedType().getMethods()) {
            if (dev.ratelimit.jakarta.AnnotatedMethod.isAnnotated(method.getJavaMember())
                    && !method.getJavaMember().getDeclaringClass().isAnnotationPresent(jakarta.interceptor.Interceptor.class)) {
                methods.add(method.getJavaMember());
            }
        }
    }

    /** The annotated methods found, in the order found. */
    List<Method> methods() {
        return List.copyOf(methods);
    }
}
