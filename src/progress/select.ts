// Engine selection (sdma_select_engine_vl, sdma.c): the VL → engines map that sdma_map_init builds and the lookup of
// sdma_select_engine_vl.

/** One VL's element: a power-of-two slot array filled round-robin over its engines. */
export interface MapElem {
  mask: number;
  engines: number[];
}

/** struct sdma_vl_map (sdma_select_engine_vl, sdma.c). */
export interface VlMap {
  /** engine → owning VL, −1 when the engine serves none. */
  engineToVl: number[];
  actualVls: number;
  vls: number;
  mask: number;
  /** `vls` entries; entries ≥ actualVls alias map[i % actualVls]. */
  map: MapElem[];
}

function roundupPow2(n: number): number {
  let p = 1;
  while (p < n) p <<= 1;
  return p;
}

/**
 * sdma_map_init without an explicit table (sdma_select_engine_vl, sdma.c): each VL gets numSdma / numVls engines, the
 * remainder going one each to the highest VLs; engines ascend, VL 0 first.
 */
export function buildVlMap(numSdma: number, numVls: number): VlMap {
  if (!Number.isInteger(numVls) || numVls < 1 || numVls > 8) throw new RangeError(`numVls must be 1-8, got ${numVls}`);
  if (!Number.isInteger(numSdma) || numSdma < numVls) {
    throw new RangeError(`numSdma must be an integer ≥ numVls (${numVls}), got ${numSdma}`);
  }
  const per = Math.floor(numSdma / numVls);
  const extra = numSdma % numVls;
  const engineToVl = new Array<number>(numSdma).fill(-1);
  const elems: MapElem[] = [];
  let next = 0;
  for (let vl = 0; vl < numVls; vl++) {
    const n = per + (vl >= numVls - extra ? 1 : 0);
    const mine: number[] = [];
    for (let i = 0; i < n; i++) {
      engineToVl[next] = vl;
      mine.push(next++);
    }
    const slots = roundupPow2(n);
    elems.push({ mask: slots - 1, engines: Array.from({ length: slots }, (_, i) => mine[i % n] as number) });
  }
  const vls = roundupPow2(numVls);
  const map = Array.from({ length: vls }, (_, i) => elems[i % numVls] as MapElem);
  return { engineToVl, actualVls: numVls, vls, mask: vls - 1, map };
}

/** sdma_select_engine_vl (sdma_select_engine_vl, sdma.c): engine 0 when vl ≥ num_vls or there is no map. */
export function selectEngineVl(map: VlMap | null, selector: number, vl: number, numVlsParam: number): number {
  if (vl >= numVlsParam || !map) return 0;
  const elem = map.map[vl & map.mask];
  if (!elem) return 0;
  return elem.engines[(selector >>> 0) & elem.mask] ?? 0;
}
