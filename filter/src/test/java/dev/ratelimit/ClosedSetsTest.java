package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sets of the API a caller may switch over exhaustively stay as 1.0 released them: an added
 * enum constant or permitted subtype breaks such a switch (it no longer compiles, and code
 * compiled before throws), yet the binary-compatibility check takes it for an addition. So the
 * failure policies and the bases of a decision are listed here; a change is a 2.0 change.
 * {@link Algorithm} and {@link CalendarWindow.Unit} are open: their Javadoc says a 1.x release
 * may add to them.
 */
class ClosedSetsTest {

    @Test
    void theFailurePoliciesAreOpenClosedAndLocal() {
        assertThat(FailurePolicy.class.isSealed()).isTrue();
        assertThat(Arrays.stream(FailurePolicy.class.getPermittedSubclasses()).map(Class::getSimpleName))
                .containsExactly("Open", "Closed", "Local");
        assertThat(FailurePolicy.Kind.values()).extracting(Enum::name).containsExactly("OPEN", "CLOSED", "LOCAL");
    }

    @Test
    void aDecisionRestsOnOneOfFourBases() {
        assertThat(Decision.Basis.values()).extracting(Enum::name)
                .containsExactly("SHARED", "LOCAL", "SKIPPED", "UNAVAILABLE");
    }
}
