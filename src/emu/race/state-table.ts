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
    if (u < 0 || u > 0xffff || !Number.isInteger(u)) throw new Error(`race state value ${x} out of range`);
    if (this.length + 3 > this.bytes.length) {
      const b = new Uint8Array(this.bytes.length * 2);
      b.set(this.bytes);
      this.bytes = b;
    }
    const b = this.bytes;
    if (u < 0xff) b[this.length++] = u;
    else {
      b[this.length++] = 0xff;
      b[this.length++] = u >>> 8;
      b[this.length++] = u & 0xff;
    }
    this.hash = Math.imul(this.hash ^ u, 0x01000193);
  }

  /** The key as a string (for the few states kept in ordinary maps). */
  toString(): string {
    return String.fromCharCode.apply(null, Array.from(this.bytes.subarray(0, this.length)));
  }
}

/** A set of keys with one integer of data each. */
export class StateTable {
  private arena = new Uint8Array(1 << 20);
  private used = 0;
  private slots = new Int32Array(1 << 16);
  private offsets = new Int32Array(1 << 15);
  private hashes = new Uint32Array(1 << 15);
  private data = new Float64Array(1 << 15);
  /** States stored. */
  size = 0;

  /** The id of the key, or −1 when it is not stored. */
  find(k: KeyBuilder): number {
    const mask = this.slots.length - 1;
    const h = k.hash >>> 0;
    for (let i = h & mask; ; i = (i + 1) & mask) {
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
    if (this.used + k.length > this.arena.length) {
      const a = new Uint8Array(Math.max(this.arena.length * 2, this.used + k.length));
      a.set(this.arena.subarray(0, this.used));
      this.arena = a;
    }
    this.arena.set(k.bytes.subarray(0, k.length), this.used);
    this.offsets[id] = this.used;
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
    return this.arena.byteLength + this.slots.byteLength + this.offsets.byteLength * 2 + this.data.byteLength;
  }

  private equals(id: number, k: KeyBuilder): boolean {
    const start = this.offsets[id] as number;
    const end = id + 1 < this.size ? (this.offsets[id + 1] as number) : this.used;
    if (end - start !== k.length) return false;
    const a = this.arena;
    const b = k.bytes;
    for (let i = 0; i < k.length; i++) if (a[start + i] !== b[i]) return false;
    return true;
  }

  private place(id: number): void {
    const mask = this.slots.length - 1;
    let i = (this.hashes[id] as number) & mask;
    while (this.slots[i] !== 0) i = (i + 1) & mask;
    this.slots[i] = id + 1;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let id = 0; id < this.size; id++) this.place(id);
  }

  private growRecords(): void {
    const n = this.offsets.length * 2;
    const o = new Int32Array(n);
    o.set(this.offsets);
    this.offsets = o;
    const h = new Uint32Array(n);
    h.set(this.hashes);
    this.hashes = h;
    const d = new Float64Array(n);
    d.set(this.data);
    this.data = d;
  }
}
