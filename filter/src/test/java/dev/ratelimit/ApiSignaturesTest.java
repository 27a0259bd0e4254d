package dev.ratelimit;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public surface is the README's list all the way down: what an API type shows (its
 * supertypes; the types of its public and protected fields, and of its methods' and constructors'
 * parameters, results, type arguments and exceptions) names no type of ours outside that list.
 * A package-private or internal type there is a type users are handed and cannot name, and
 * the public members a public class inherits from a package-private one are API that neither
 * the list nor the Javadoc check sees.
 */
class ApiSignaturesTest {

    @Test
    void theApiNamesOnlyApiTypes() {
        Set<String> api = ArchitectureTest.documentedPublicTypes(ArchitectureTest.read(ArchitectureTest.LAYOUT)).keySet();
        List<String> leaks = new ArrayList<>();
        for (JavaClass type : ArchitectureTest.MAIN) {
            if (!api.contains(type.getPackageName()) || !ArchitectureTest.isVisibleOutside(type)) {
                continue;
            }
            for (JavaClass named : shown(type)) {
                JavaClass base = named.isArray() ? named.getBaseComponentType() : named;
                boolean ours = base.getPackageName().equals("dev.ratelimit") || base.getPackageName().startsWith("dev.ratelimit.");
                if (ours && !(api.contains(base.getPackageName()) && ArchitectureTest.isVisibleOutside(base))) {
                    leaks.add(type.getName() + " shows " + base.getName());
                }
            }
        }
        assertThat(leaks).as("types of ours outside the README's public list, shown by API types").isEmpty();
    }

    /** The raw types a type's public face names: supertypes, and its public and protected members' signatures. */
    private static Set<JavaClass> shown(JavaClass type) {
        Set<JavaClass> shown = new LinkedHashSet<>();
        type.getRawSuperclass().ifPresent(shown::add);
        shown.addAll(type.getRawInterfaces());
        for (JavaMember member : type.getMembers()) {
            Set<JavaModifier> modifiers = member.getModifiers();
            if (!modifiers.contains(JavaModifier.PUBLIC) && !modifiers.contains(JavaModifier.PROTECTED)) {
                continue;
            }
            if (member instanceof JavaField field) {
                shown.addAll(field.getType().getAllInvolvedRawTypes());
            } else if (member instanceof JavaCodeUnit code) {
                shown.addAll(code.getReturnType().getAllInvolvedRawTypes());
                for (JavaType parameter : code.getParameterTypes()) {
                    shown.addAll(parameter.getAllInvolvedRawTypes());
                }
                shown.addAll(code.getThrowsClause().getTypes());
            }
        }
        return shown;
    }
}
