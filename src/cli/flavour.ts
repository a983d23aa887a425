// How a unit's flavour (module, chip, driver build, ports) and engine window read in text and JSON.
import type { ChipKind, UnitFlavour, UnitInfo } from '../backend.js';
import { engineWindow } from './units.js';

/** The product each chip is sold as. */
export const CHIP_PRODUCT: Readonly<Record<ChipKind, string>> = { wfr: 'Omni-Path 100', jkr: 'CN5000' };

/** `jkr (CN5000)  driver hfi2  ports 2  engines 8-15`: the flavour and the engine window in one phrase. */
export function flavourPhrase(info: Pick<UnitInfo, 'flavour' | 'engineIds'>): string {
  const f = info.flavour;
  return `${f.chip} (${CHIP_PRODUCT[f.chip]})  driver ${f.driver}  ports ${f.ports}  engines ${engineWindow(info.engineIds)}`;
}

/** The unit fields every command's JSON carries: module, chip, driver, ports, the absolute engine indexes. */
export interface FlavourJson {
  module: UnitFlavour['module'];
  chip: ChipKind;
  driver: UnitFlavour['driver'];
  ports: number;
  engineIds: number[];
}

/** The flavour fields of a unit's JSON object. */
export function flavourJson(info: Pick<UnitInfo, 'flavour' | 'engineIds'>): FlavourJson {
  const f = info.flavour;
  return { module: f.module, chip: f.chip, driver: f.driver, ports: f.ports, engineIds: [...info.engineIds] };
}
