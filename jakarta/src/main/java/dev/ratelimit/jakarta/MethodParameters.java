package dev.ratelimit.jakarta;

import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The names a rule's {@code param:} key part may give a method's parameters: a Jakarta REST
 * parameter's {@code @PathParam}, {@code @QueryParam} or {@code @FormParam} name (those of a
 * {@code @BeanParam}'s fields and setters too, and their own names), the parameter's own name when
 * the class was compiled with {@code -parameters}, and its position ({@code 0}, {@code 1}...).
 * A value is the text of what the method receives ({@link ReceivedText}): its
 * {@code @DefaultValue} when nothing is sent, converted as Jakarta REST converts it.
 *
 * @param parameters one per parameter, and one per member of a {@code @BeanParam}, in order
 */
record MethodParameters(List<Named> parameters) {

    /** Copies the list. */
    MethodParameters {
        parameters = List.copyOf(parameters);
    }

    /** Where a Jakarta REST method's parameter comes from; {@link #ARGUMENT} for any other. */
    enum Source {
        /** {@code @PathParam}. */
        PATH,
        /** {@code @QueryParam}. */
        QUERY,
        /** {@code @FormParam}. */
        FORM,
        /** A plain argument: a CDI method's, or a resource method's entity. */
        ARGUMENT
    }

    /**
     * One parameter, or one member of a {@code @BeanParam} parameter.
     *
     * @param position     the method parameter's index
     * @param beanMember   whether it is a field or setter of a {@code @BeanParam} parameter
     * @param member       a {@code @BeanParam}'s field, read from a CDI call's bean argument;
     *                     null for a parameter, or a setter (whose value is read from the request only)
     * @param source       where a Jakarta REST method's value comes from
     * @param rest         its Jakarta REST name, or null for {@link Source#ARGUMENT}
     * @param names        every name it answers to
     * @param defaultValue its {@code @DefaultValue}, or null
     * @param encoded      whether it receives the text undecoded ({@code @Encoded})
     * @param type         the type it receives (a collection's element type)
     */
    record Named(int position, boolean beanMember, Field member, Source source, String rest, Set<String> names,
                 String defaultValue, boolean encoded, Class<?> type) {

        /** Copies the set. */
        Named {
            names = Set.copyOf(names);
        }

        /**
         * The text of what the method receives for the text sent.
         *
         * @param sent the first value sent, or null when none was
         * @return the text; empty when the method receives nothing (null), or could not be called
         */
        Optional<String> received(String sent) {
            // As Jakarta REST (Jersey) reads a number or a boolean: an empty or blank value is none.
            boolean none = sent == null || sent.isBlank() && ReceivedText.blankIsNone(type);
            String text = none ? defaultValue : sent;
            return text == null ? ReceivedText.absent(type) : ReceivedText.of(text, type);
        }
    }

    /**
     * The parameters of a method.
     *
     * @param method the method
     * @return its parameters' names
     */
    static MethodParameters of(Method method) {
        List<Named> named = new ArrayList<>();
        Parameter[] parameters = method.getParameters();
        boolean encodedMethod = method.isAnnotationPresent(Encoded.class)
                || method.getDeclaringClass().isAnnotationPresent(Encoded.class);
        for (int i = 0; i < parameters.length; i++) {
            Parameter parameter = parameters[i];
            Set<String> names = new LinkedHashSet<>();
            if (parameter.isNamePresent()) {
                names.add(parameter.getName());
            }
            names.add(Integer.toString(i));
            if (parameter.isAnnotationPresent(BeanParam.class)) {
                named.add(new Named(i, false, null, Source.ARGUMENT, null, names, null, false, parameter.getType()));
                members(i, parameter.getType(), encodedMethod, named);
                continue;
            }
            named.add(named(i, false, null, parameter, names, parameter.getType(), parameter.getParameterizedType(),
                    encodedMethod));
        }
        return new MethodParameters(named);
    }

    /** A {@code @BeanParam}'s annotated fields and setters, each by its Jakarta REST name and its own. */
    private static void members(int position, Class<?> bean, boolean encoded, List<Named> named) {
        for (Class<?> type = bean; type != null && type != Object.class; type = type.getSuperclass()) {
            for (Field field : type.getDeclaredFields()) {
                if (!Modifier.isStatic(field.getModifiers())) {
                    Set<String> names = new LinkedHashSet<>(List.of(field.getName()));
                    Named member = named(position, true, field, field, names, field.getType(), field.getGenericType(),
                            encoded);
                    if (member.source() != Source.ARGUMENT) {
                        named.add(member);
                    }
                }
            }
            for (Method setter : type.getDeclaredMethods()) {
                if (setter.getParameterCount() == 1 && setter.getName().startsWith("set")) {
                    Named member = named(position, true, null, setter, new LinkedHashSet<>(),
                            setter.getParameterTypes()[0], setter.getGenericParameterTypes()[0], encoded);
                    if (member.source() != Source.ARGUMENT) {
                        named.add(member);
                    }
                }
            }
        }
    }

    private static Named named(int position, boolean beanMember, Field member, AnnotatedElement element, Set<String> names, Class<?> type,
                               Type generic, boolean encoded) {
        PathParam path = element.getAnnotation(PathParam.class);
        QueryParam query = element.getAnnotation(QueryParam.class);
        FormParam form = element.getAnnotation(FormParam.class);
        Source source = Source.ARGUMENT;
        String rest = null;
        if (path != null) {
            source = Source.PATH;
            rest = path.value();
        } else if (query != null) {
            source = Source.QUERY;
            rest = query.value();
        } else if (form != null) {
            source = Source.FORM;
            rest = form.value();
        }
        Set<String> all = new LinkedHashSet<>();
        if (rest != null) {
            all.add(rest);
        }
        all.addAll(names);
        DefaultValue defaultValue = element.getAnnotation(DefaultValue.class);
        return new Named(position, beanMember, member, source, rest, all, defaultValue == null ? null : defaultValue.value(),
                encoded || element.isAnnotationPresent(Encoded.class), elementType(type, generic));
    }

    /** The type a value converts to: a collection's element type, else the type itself. */
    private static Class<?> elementType(Class<?> type, Type generic) {
        if (Collection.class.isAssignableFrom(type) && generic instanceof ParameterizedType parameterized
                && parameterized.getActualTypeArguments()[0] instanceof Class<?> element) {
            return element;
        }
        return type;
    }

    /**
     * The parameter a name gives, if one does.
     *
     * @param name a {@code param:} part's name
     * @param rest whether the method is a Jakarta REST one, whose values are read from the
     *             request before it runs: only its path, query and form parameters have one then
     * @return the parameter
     */
    Optional<Named> named(String name, boolean rest) {
        return usable(rest).filter(p -> p.names().contains(name)).findFirst();
    }

    /**
     * Every parameter a name gives: more than one makes the name ambiguous (one parameter's
     * Jakarta REST name another's Java name), and a request could choose the key by the other.
     *
     * @param name a {@code param:} part's name
     * @param rest whether the method is a Jakarta REST one
     * @return the parameters, in order
     */
    List<Named> allNamed(String name, boolean rest) {
        return usable(rest).filter(p -> p.names().contains(name)).toList();
    }

    /**
     * Every name of every parameter a key may use, for a message.
     *
     * @param rest whether the method is a Jakarta REST one
     * @return the names, in order
     */
    List<String> names(boolean rest) {
        return usable(rest).flatMap(p -> p.names().stream()).distinct().toList();
    }

    private Stream<Named> usable(boolean rest) {
        return parameters.stream().filter(p -> !rest || p.source() != Source.ARGUMENT);
    }

    /**
     * A CDI call's values by every name of their parameters (a {@code @BeanParam}'s fields
     * read from the bean); a null argument, or a null field, has none.
     *
     * @param arguments the call's arguments
     * @return name to value as text
     */
    Map<String, String> values(Object[] arguments) {
        Map<String, String> values = new LinkedHashMap<>();
        for (Named parameter : parameters) {
            Object argument = arguments[parameter.position()];
            if (parameter.beanMember()) {
                // A setter's value is not kept where a call's argument shows it.
                argument = argument == null || parameter.member() == null ? null : read(parameter.member(), argument);
            }
            if (argument instanceof Collection<?> collection) {
                argument = collection.isEmpty() ? null : collection.iterator().next();
            }
            if (argument != null) {
                String text = String.valueOf(argument);
                parameter.names().forEach(name -> values.putIfAbsent(name, text));
            }
        }
        return values;
    }

    /** A {@code @BeanParam} field's value, or null when it cannot be read. */
    private static Object read(Field field, Object bean) {
        try {
            field.setAccessible(true);
            return field.get(bean);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
