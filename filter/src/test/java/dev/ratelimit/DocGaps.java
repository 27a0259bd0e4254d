package dev.ratelimit;

import com.sun.source.doctree.DocCommentTree;
import com.sun.source.doctree.DocTree;
import com.sun.source.doctree.ParamTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;

import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.RecordComponentElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What javac's doclint lets through although the Javadoc of a public or protected element says
 * nothing: a default constructor (it has no comment to have), a record component without its
 * {@code @param} (its accessor is documented by that tag alone), an empty comment, and a
 * {@code {@inheritDoc}} on a method that inherits from nothing. Members a public type inherits
 * from a package-private one are {@link ApiSignaturesTest}'s.
 */
final class DocGaps {

    private final DocTrees docs;
    private final Elements elements;
    private final Types types;
    private final List<String> gaps = new ArrayList<>();

    private DocGaps(JavacTask task) {
        this.docs = DocTrees.instance(task);
        this.elements = task.getElements();
        this.types = task.getTypes();
    }

    /**
     * The gaps in a source tree's Javadoc.
     *
     * @param root      the source root
     * @param classPath what the sources compile against
     * @return one line per gap, naming the element
     * @throws IOException if the sources cannot be read
     */
    static List<String> of(Path root, String classPath) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8);
             Stream<Path> walk = Files.walk(root)) {
            List<File> sources = walk.filter(file -> file.toString().endsWith(".java")).map(Path::toFile).toList();
            JavacTask task = (JavacTask) javac.getTask(null, files, diagnostic -> { }, List.of("-proc:none",
                    "-classpath", classPath), null, files.getJavaFileObjectsFromFiles(sources));
            Iterable<? extends CompilationUnitTree> units = task.parse();
            task.analyze();
            DocGaps found = new DocGaps(task);
            for (CompilationUnitTree unit : units) {
                for (Tree declaration : unit.getTypeDecls()) {
                    if (found.docs.getElement(TreePath.getPath(unit, declaration)) instanceof TypeElement type) {
                        found.check(type);
                    }
                }
            }
            return found.gaps;
        }
    }

    private void check(TypeElement type) {
        if (!visible(type)) {
            return;
        }
        checkComment(type);
        DocCommentTree doc = docs.getDocCommentTree(type);
        for (RecordComponentElement component : type.getRecordComponents()) {
            if (doc == null || doc.getBlockTags().stream().noneMatch(tag -> tag instanceof ParamTree param
                    && !param.isTypeParameter() && param.getName().getName().contentEquals(component.getSimpleName()))) {
                gaps.add(type + ": record component " + component.getSimpleName() + " has no @param");
            }
        }
        for (Element member : type.getEnclosedElements()) {
            if (member instanceof TypeElement nested) {
                check(nested);
            } else if (visible(member)) {
                boolean declared = elements.getOrigin(member) == Elements.Origin.EXPLICIT;
                if (member.getKind() == ElementKind.CONSTRUCTOR && !declared && type.getKind() == ElementKind.CLASS) {
                    gaps.add(type + ": the default constructor has no comment (declare it, with one)");
                } else if (declared) {
                    checkComment(member);
                }
            }
        }
    }

    private void checkComment(Element element) {
        DocCommentTree doc = docs.getDocCommentTree(element);
        if (doc == null) {
            return; // doclint's "no comment"
        }
        String name = element instanceof TypeElement ? element.toString() : element.getEnclosingElement() + "." + element;
        if (doc.getFullBody().isEmpty() && doc.getBlockTags().isEmpty()) {
            gaps.add(name + ": empty comment");
        }
        boolean inherits = doc.getFullBody().stream().anyMatch(tree -> tree.getKind() == DocTree.Kind.INHERIT_DOC);
        if (inherits && !(element instanceof ExecutableElement method && overridesAny(method))) {
            gaps.add(name + ": {@inheritDoc} with nothing to inherit");
        }
    }

    private boolean overridesAny(ExecutableElement method) {
        TypeElement owner = (TypeElement) method.getEnclosingElement();
        List<TypeMirror> pending = new ArrayList<>(types.directSupertypes(owner.asType()));
        while (!pending.isEmpty()) {
            TypeMirror next = pending.remove(pending.size() - 1);
            if (next instanceof DeclaredType declared && declared.asElement() instanceof TypeElement supertype) {
                for (Element other : supertype.getEnclosedElements()) {
                    if (other instanceof ExecutableElement candidate && elements.overrides(method, candidate, owner)) {
                        return true;
                    }
                }
                pending.addAll(types.directSupertypes(next));
            }
        }
        return false;
    }

    /** Public or protected, in types that are so too: what the Javadoc shows. */
    private static boolean visible(Element element) {
        for (Element e = element; e instanceof TypeElement || e == element; e = e.getEnclosingElement()) {
            Set<Modifier> modifiers = e.getModifiers();
            if (!modifiers.contains(Modifier.PUBLIC) && !modifiers.contains(Modifier.PROTECTED)) {
                return false;
            }
        }
        return true;
    }
}
