// Limits of device pairing, with their units.

/** Devices paired at once with one server (devices). */
export const DEFAULT_MAX_DEVICES = 32;

/** Longest device label kept (characters). */
export const DEFAULT_MAX_DEVICE_LABEL_CHARS = 64;

/** A device's last use is written to the store (and views told) at most this often, in ms. */
export const DEFAULT_DEVICE_LAST_USE_WRITE_MS = 60_000;

/**
 * How often each node reads the device list again from the store, in ms. A
 * revocation reaches the other nodes as an event at once; an event lost while
 * a node's link to the store was down (it also reads again on reconnecting)
 * leaves a revoked device accepted there at most this long.
 */
export const DEFAULT_DEVICE_RELOAD_MS = 5_000;
