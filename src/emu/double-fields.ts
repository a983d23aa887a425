// V8 keeps a number field as a small integer until a value outside 31 bits (or a fraction) is stored in it; it then
// makes the field a double, gives every object of that shape a new map and throws away the code optimised for the
// old one. The emulator's times in ns, hashes and scheduler handles pass 2^30 about a virtual second into any run:
// their fields are made doubles when their objects are made, so that this happens once, before anything is
// optimised, rather than in the middle of a command's run (where it recompiled the model's hot paths).

/**
 * Make the number fields `keys` of `o` double fields, their values unchanged. Each must already be a field of `o` (a
 * misspelt name would add one, a new shape of its own: it throws instead).
 */
export function doubleFields(o: object, ...keys: string[]): void {
  const r = o as Record<string, unknown>;
  for (const k of keys) {
    const v = r[k];
    if (typeof v !== 'number') throw new Error(`doubleFields: ${o.constructor.name}.${k} is not a number field`);
    r[k] = 0.5;
    r[k] = v;
  }
}
