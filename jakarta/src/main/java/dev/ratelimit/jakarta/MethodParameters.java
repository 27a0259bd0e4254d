package dev.ratelimit.jakarta;

import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The names a rule's {@code param:} key part may give a method's parameters: a Jakarta REST
 * parameter's {@code @PathParam}, {@code @QueryParam} or {@code @FormParam} name, the
 * parameter's own name when the class was compiled with {@code -parameters}, and its position
 * ({@code 0}, {@code 1}...).
 *
 * @param parameters one per parameter, in order
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
     * One parameter.
     *
     * @param position its index
     * @param source   where a Jakarta REST method's value comes from
     * @param rest     its Jakarta REST name, or null for {@link Source#ARGUMENT}
     * @param names    every name it answers to
     */
    record Named(int position, Source source, String rest, Set<String> names) {

        /** Copies the set. */
        Named {
            names = Set.copyOf(names);
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
        for (int i = 0; i < parameters.length; i++) {
            Parameter parameter = parameters[i];
            Set<String> names = new LinkedHashSet<>();
            Source source = Source.ARGUMENT;
            String rest = null;
            PathParam path = parameter.getAnnotation(PathParam.class);
            QueryParam query = parameter.getAnnotation(QueryParam.class);
            FormParam form = parameter.getAnnotation(FormParam.class);
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
            if (rest != null) {
                names.add(rest);
            }
            if (parameter.isNamePresent()) {
                names.add(parameter.getName());
            }
            names.add(Integer.toString(i));
            named.add(new Named(i, source, rest, names));
        }
        return new MethodParameters(named);
    }

    /**
     * Whether some parameter answers to a name.
     *
     * @param name a {@code param:} part's name
     * @param rest whether the method is a Jakarta REST one, whose values are read from the
     *             request before it runs: only its path, query and form parameters have one then
     * @return true when one does
     */
    boolean has(String name, boolean rest) {
        return usable(rest).anyMatch(p -> p.names().contains(name));
    }

    /**
     * Every name of every parameter a key may use, for a message.
     *
     * @param rest whether the method is a Jakarta REST one
     * @return the names, in order
     */
    List<String> names(boolean rest) {
        return usable(rest).flatMap(p -> p.names().stream()).toList();
    }

    private java.util.stream.Stream<Named> usable(boolean rest) {
        return parameters.stream().filter(p -> !rest || p.source() != Source.ARGUMENT);
    }

    /**
     * A CDI call's values by every name of their parameters; a null argument has none.
     *
     * @param arguments the call's arguments
     * @return name to value as text
     */
    Map<String, String> values(Object[] arguments) {
        Map<String, String> values = new LinkedHashMap<>();
        for (Named parameter : parameters) {
            Object argument = arguments[parameter.position()];
            if (argument != null) {
                parameter.names().forEach(name -> values.put(name, String.valueOf(argument)));
            }
        }
        return values;
    }
}
