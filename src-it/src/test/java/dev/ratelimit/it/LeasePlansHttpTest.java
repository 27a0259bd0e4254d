package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the filter over HTTP, one rule with plans from a trusted proxy's header and
 * local leases: a caller on one instance changes plan (README, "Plans": one state per rule and
 * key), then the other instance asks for the same caller on the rule's own limit. The README's
 * bound on units withheld ("Local leases"): per rule and key, another instance holds at most
 * {@code local-lease} units for each plan the key was decided under (a lease per plan).
 * Leases last 30 s, longer than the requests take; one ending early or
 * a new hour only lowers what is withheld, so neither can fail the test by itself.
 */
@ExtendWith(ValkeyExtension.class)
class LeasePlansHttpTest {

    private static final int LEASE = 8;
    private static final int LIMIT = 100;

    private final ValkeyServer valkey;

    LeasePlansHttpTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings() {
        return JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", Integer.toString(LIMIT),
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.pro.limit", "1000",
                "ratelimit.rule.api.local-lease", Integer.toString(LEASE), "ratelimit.rule.api.local-lease-time", "30s",
                "ratelimit.trusted-proxies", "127.0.0.1/32", "ratelimit.deny-cache.enabled", "false");
    }

    @Test
    void aCallerChangingPlanLeavesAtMostOneLeaseWithheldOnItsInstance() throws Exception {
        try (JettyApp holder = JettyApp.start(settings()); JettyApp other = JettyApp.start(settings())) {
            long admitted = 0;
            // Leases of 1, 2, 4, then one of 8 left whole: on the rule's own limit, then on pro.
            for (String[] headers : new String[][] {{"X-Caller", "c"}, {"X-Caller", "c", "X-Plan", "pro"}}) {
                for (int i = 0; i < 12; i++) {
                    assertThat(holder.get("/", headers).statusCode()).isEqualTo(200);
                    admitted++;
                }
            }
            long byOther = 0;
            while (byOther < 200 && other.get("/", "X-Caller", "c").statusCode() == 200) {
                byOther++;
            }
            long withheld = LIMIT - admitted - byOther;
            System.out.printf("admitted by the holder %d, by the other %d, withheld %d of %d%n", admitted, byOther,
                    withheld, LIMIT);
            assertThat(withheld).as("units of the rule's own limit withheld by the holder, under two plans")
                    .isLessThanOrEqualTo(2 * LEASE);
        }
    }
}
