package dev.ratelimit.jakarta;

import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Optional;

/**
 * The text a key takes from a method's parameter: that of the value the method receives, not of
 * what the client sent. A resource method's {@code @QueryParam("id") int id} receives 7 for
 * {@code id=7}, {@code id=07} and {@code id=+7}: one caller, so one key, {@code 7}. Jakarta REST's
 * own conversions are followed (a primitive; a {@code String} constructor; a static
 * {@code valueOf} or, for an enum, {@code fromString} taking a {@code String}), and the value's
 * {@code toString} gives the text, as a CDI call's argument does. A type only a registered
 * {@code ParamConverter} converts is keyed by the text sent.
 */
final class ReceivedText {

    private static final Map<Class<?>, Class<?>> BOXES = Map.of(int.class, Integer.class, long.class, Long.class,
            short.class, Short.class, byte.class, Byte.class, double.class, Double.class, float.class, Float.class,
            boolean.class, Boolean.class, char.class, Character.class);

    private ReceivedText() {
    }

    /**
     * What a primitive parameter receives when nothing is sent and it has no default: Jakarta
     * REST gives it its type's default value ({@code 0}, {@code false}).
     *
     * @param type the parameter's type
     * @return the text of that value, or empty for any other type (it receives null: no key)
     */
    static Optional<String> absent(Class<?> type) {
        if (!type.isPrimitive() || type == char.class) {
            return Optional.empty();
        }
        // The default of the type as an array holds it: 0, 0.0, false.
        return Optional.of(String.valueOf(Array.get(Array.newInstance(type, 1), 0)));
    }

    /**
     * Whether an empty or blank text is no value at all for this type, as Jersey reads a
     * primitive or its wrapper: the parameter then receives its default.
     *
     * @param type the parameter's type
     * @return true for a primitive or a primitive's wrapper
     */
    static boolean blankIsNone(Class<?> type) {
        return type.isPrimitive() || BOXES.containsValue(type);
    }

    /**
     * The text of the value a parameter of this type receives for the text sent.
     *
     * @param sent the text sent (after {@code @DefaultValue}), not null
     * @param type the parameter's type (a collection's element type)
     * @return the value's text; empty when Jakarta REST could not convert it (it then answers
     *         404 or 400 without calling the method, and nothing is counted)
     */
    static Optional<String> of(String sent, Class<?> type) {
        if (type == String.class || type == Object.class || type == CharSequence.class) {
            return Optional.of(sent);
        }
        Class<?> boxed = BOXES.getOrDefault(type, type);
        if (boxed == Character.class) {
            return sent.length() == 1 ? Optional.of(sent) : Optional.empty();
        }
        try {
            Method from = factory(boxed);
            if (from != null) {
                return Optional.ofNullable(from.invoke(null, sent)).map(String::valueOf);
            }
            Constructor<?> constructor = boxed.getConstructor(String.class);
            return Optional.of(String.valueOf(constructor.newInstance(sent)));
        } catch (InvocationTargetException | InstantiationException e) {
            // The conversion refused the text: Jakarta REST answers without calling the method.
            return Optional.empty();
        } catch (NoSuchMethodException | IllegalAccessException | RuntimeException e) {
            // Converted by a ParamConverter, which a request filter cannot reach: keyed by the text sent.
            return Optional.of(sent);
        }
    }

    /**
     * The static factory Jakarta REST converts with: {@code valueOf(String)}, or for an enum
     * {@code fromString(String)} first; null when there is none.
     */
    private static Method factory(Class<?> type) {
        Method valueOf = staticMethod(type, "valueOf");
        Method fromString = staticMethod(type, "fromString");
        if (type.isEnum() && fromString != null) {
            return fromString;
        }
        return valueOf != null ? valueOf : fromString;
    }

    private static Method staticMethod(Class<?> type, String name) {
        try {
            Method method = type.getMethod(name, String.class);
            return Modifier.isStatic(method.getModifiers()) ? method : null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /**
     * Whether the values of a type have a text of their own to key by: a type that says what it
     * is in its {@code toString} (a string, a number, an enum, or any type that declares one). An
     * object's default {@code toString} names the object, a new key for every call.
     *
     * @param type a parameter's declared type
     * @return true when a key can be built from it
     */
    static boolean keyable(Class<?> type) {
        if (type.isPrimitive() || type.isEnum() || CharSequence.class.isAssignableFrom(type)
                || Number.class.isAssignableFrom(type) || type == Boolean.class || type == Character.class
                || type == Object.class || type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
            // An interface or Object: the argument's own class says; accepted, as a value class usually does.
            return true;
        }
        try {
            return type.getMethod("toString").getDeclaringClass() != Object.class;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }
}
