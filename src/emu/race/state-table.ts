// The visited states of the exhaustive search: keys (vectors of small integers) packed into one
// byte arena, found by open addressing on a 32-bit hash and compared in full, so that a hash
// collision never merges two states. Each state gets an id (its insertion order) and one number of
// search data. Far smaller and faster than a Map of strings at millions of states.

/** A key being built: bytes, their count and hash. Fill with `push`, then look it up. */
export class KeyBuilder {
  bytes = new Uint8Array(256);
  length = 0;
  hash = 0x811c9dc5;

  /** Start a new key. */
  clear(): void {
    this.length = 0;
    this.hash = 0x811c9dc5;
  }

  /** Append a value from −2 up to 65533: one byte below 253, else an escape and two bytes (FNV-1a over values). */
  push(x: number): void {
    const u = x + 2;
    if (this.length + 3 > this.bytes.length) this.grow();
    if (u >= 0 && u < 0xff && (u | 0) === u) this.bytes[this.length++] = u;
    else {
      if (u < 0 || u > 0xffff || !Number.isInteger(u)) throw new Error(`race state value ${x} out of range`);
      this.bytes[this.length++] = 0xff;
      this.bytes[this.length++] = u >>> 8;
      this.bytes[this.length++] = u & 0xff;
    }
    this.hash = Math.imul(this.hash ^ u, 0x01000193);
  }

  private grow(): void {
    const b = new Uint8Array(this.bytes.length * 2);
    b.set(this.bytes);
    this.bytes = b;
  }

  /** The key as a string (for the few states kept in ordinary maps). */
  toString(): string {
    return String.fromCharCode.apply(null, Array.from(this.bytes.subarray(0, this.length)));
  }
}

/**
 * The slot a hash starts probing at: the hash's bits mixed (murmur3's finalizer) so that the low bits the mask
 * keeps depend on every value of the key, not only on the values' own low bits.
 */
function home(h: number, mask: number): number {
  let x = h;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) & mask;
}

/** Bytes per arena chunk: keys never straddle two, and growing never copies what is stored. */
const CHUNK_BITS = 24;
const CHUNK = 1 << CHUNK_BITS;

/** A set of keys with one integer of data each. */
export class StateTable {
  private readonly chunks: Uint8Array[] = [];
  /** Position of the next key: chunk index × CHUNK + offset. */
  private used = 0;
  private slots = new Int32Array(1 << 16);
  private offsets = new Float64Array(1 << 15);
  private lengths = new Uint16Array(1 << 15);
  private hashes = new Uint32Array(1 << 15);
  private data = new Float64Array(1 << 15);
  /** States stored. */
  size = 0;

  /** The id of the key, or −1 when it is not stored. */
  find(k: KeyBuilder): number {
    const mask = this.slots.length - 1;
    const h = k.hash >>> 0;
    for (let i = home(h, mask); ; i = (i + 1) & mask) {
      const s = this.slots[i] as number;
      if (s === 0) return -1;
      const id = s - 1;
      if (this.hashes[id] === h && this.equals(id, k)) return id;
    }
  }

  /** Store a key that `find` did not find, with its data; returns its id. */
  add(k: KeyBuilder, data: number): number {
    if ((this.size + 1) * 2 > this.slots.length) this.rehash();
    const id = this.size++;
    if (id >= this.offsets.length) this.growRecords();
    if (k.length > 0xffff) throw new Error(`race state key of ${k.length} bytes`);
    // The last chunk starts at (chunks − 1) × CHUNK; `used` is past its last key.
    let at = this.used - (this.chunks.length - 1) * CHUNK;
    if (this.chunks.length === 0 || at + k.length > CHUNK) {
      // A small first chunk, so that small searches stay small; then whole chunks.
      this.chunks.push(new Uint8Array(this.chunks.length === 0 ? 1 << 16 : CHUNK));
      this.used = (this.chunks.length - 1) * CHUNK;
      at = 0;
    }
    let chunk = this.chunks[this.chunks.length - 1] as Uint8Array;
    if (at + k.length > chunk.length) {
      const bigger = new Uint8Array(Math.min(CHUNK, chunk.length * 4));
      bigger.set(chunk);
      this.chunks[this.chunks.length - 1] = bigger;
      chunk = bigger;
    }
    chunk.set(k.bytes.subarray(0, k.length), at);
    this.offsets[id] = this.used;
    this.lengths[id] = k.length;
    this.used += k.length;
    this.hashes[id] = k.hash >>> 0;
    this.data[id] = data;
    this.place(id);
    return id;
  }

  /** The data of a stored state. */
  get(id: number): number {
    return this.data[id] as number;
  }

  /** Replace the data of a stored state. */
  set(id: number, data: number): void {
    this.data[id] = data;
  }

  /** Bytes held (arena and tables). */
  bytes(): number {
    let b = this.slots.byteLength + this.offsets.byteLength + this.lengths.byteLength;
    b += this.hashes.byteLength + this.data.byteLength;
    for (const c of this.chunks) b += c.byteLength;
    return b;
  }

  private equals(id: number, k: KeyBuilder): boolean {
    if (this.lengths[id] !== k.length) return false;
    const pos = this.offsets[id] as number;
    const a = this.chunks[Math.floor(pos / CHUNK)] as Uint8Array;
    const start = pos % CHUNK;
    const b = k.bytes;
    for (let i = 0; i < k.length; i++) if (a[start + i] !== b[i]) return false;
    return true;
  }

  private place(id: number): void {
    const mask = this.slots.length - 1;
    let i = home(this.hashes[id] as number, mask);
    while (this.slots[i] !== 0) i = (i + 1) & mask;
    this.slots[i] = id + 1;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let id = 0; id < this.size; id++) this.place(id);
  }

  private growRecords(): void {
    const n = this.offsets.length * 2;
    const o = new Float64Array(n);
    o.set(this.offsets);
    this.offsets = o;
    const l = new Uint16Array(n);
    l.set(this.lengths);
    this.lengths = l;
    const h = new Uint32Array(n);
    h.set(this.hashes);
    this.hashes = h;
    const d = new Float64Array(n);
    d.set(this.data);
    this.data = d;
  }
}
