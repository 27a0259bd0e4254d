package dev.ratelimit.valkey;

/** One key's lease and demand in {@link Leases}; every field guarded by the entry itself. */
final class LeaseEntry {

    Lease lease;
    /** The last request for the key (ms); long ago for a new key. */
    long lastSeen = Long.MIN_VALUE / 4;
    /** The size of the next lease, or -1 when the key was idle: no lease for it this time. */
    long demand;
    /** The remaining units the key's last take left in the store (a hint for the next size). */
    long storeRemaining = Long.MAX_VALUE;
    /** A call asking for a lease is on its way: others ask for none (each would withhold one). */
    boolean taking;
    boolean removed;
}
