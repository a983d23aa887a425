// Which host the emulator models: the chip (WFR or JKR), the driver build (upstream hfi1, the Cornelis hfi1,
// hfi2), the port count and the window of absolute engine indexes the unit owns. The options are checked here,
// once; an impossible combination is a usage error that names it.
import type { ChipKind, DriverBuild, UnitFlavour } from '../backend.js';
import { usageError } from '../errors.js';
import { type ChipModel, chipModel, isChipName } from '../progress/chip.js';
import { TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';
import { type DriverSettings, defaultDriverSettings, isDriverName, PAD_SDMA_DESC_VALUES } from '../progress/driver.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { checkActivePorts } from './ports.js';

/** What the options name; everything has a default (WFR, upstream, one port, engines 0..15). */
export interface FlavourOptions {
  chip?: ChipKind | undefined;
  driver?: DriverBuild | undefined;
  ports?: number | undefined;
  /** The ports in use (`--active-ports`), each from 1 to `ports`; default every port. */
  activePorts?: readonly number[] | undefined;
  firstEngine?: number | undefined;
  engines?: number | undefined;
  /**
   * The host's CPU vendor is AMD: the cornelis/hfi2 builds then default (parameters at −1) to pad_sdma_desc 32,
   * sdma_align 2 and sdma_threshold 32 on JKR. Default: true on JKR (CN5000 systems are typically AMD EPYC hosts;
   * a choice), false on WFR.
   */
  amdHost?: boolean | undefined;
  /** Per-device settings that replace the automatic ones (cornelis/hfi2 only). */
  settings?: Partial<DriverSettings> | undefined;
  /** The sdma_single_descriptor module parameter (cornelis/hfi2: CTRL bit 5). Default 0. */
  singleDescriptor?: boolean | undefined;
}

/** The resolved host. */
export interface EmuFlavour {
  chip: ChipModel;
  driver: DriverBuild;
  module: 'hfi1' | 'hfi2';
  ports: number;
  /** The ports in use, ascending (every port unless `--active-ports` named fewer). */
  activePorts: number[];
  /** Absolute index of the unit's first engine, and how many it owns (a window first..first+count−1). */
  firstEngine: number;
  count: number;
  amdHost: boolean;
  settings: DriverSettings;
  singleDescriptor: boolean;
  /** True for WFR, upstream, one port, engines from 0: the host the emulator modelled first. */
  classic: boolean;
}

/** The module a driver build loads as. */
export function moduleOf(driver: DriverBuild): 'hfi1' | 'hfi2' {
  return driver === 'hfi2' ? 'hfi2' : 'hfi1';
}

/** Resolve and check the options; an impossible combination is a usage error naming it. */
export function resolveFlavour(o: FlavourOptions): EmuFlavour {
  const chipName = o.chip ?? 'wfr';
  if (!isChipName(chipName)) throw usageError(`--chip must be wfr or jkr, got ${JSON.stringify(chipName)}`);
  const driver = o.driver ?? 'upstream';
  if (!isDriverName(driver)) throw usageError(`--driver must be upstream, cornelis or hfi2, got ${JSON.stringify(driver)}`);
  const ports = o.ports ?? 1;
  if (ports !== 1 && ports !== 2) throw usageError(`--ports must be 1 or 2, got ${ports}`);
  const first = o.firstEngine ?? 0;
  const count = o.engines ?? TXE_NUM_SDMA_ENGINES - first;
  const last = first + count - 1;
  if (!Number.isInteger(first) || first < 0 || first >= TXE_NUM_SDMA_ENGINES) {
    throw usageError(`--engines: the first engine must be 0-${TXE_NUM_SDMA_ENGINES - 1}, got ${first}`);
  }
  if (!Number.isInteger(count) || count < 1 || last >= TXE_NUM_SDMA_ENGINES) {
    throw usageError(
      `--engines: the window ${first}-${last} does not fit the chip's engines 0-${TXE_NUM_SDMA_ENGINES - 1} (engines must be 1-${TXE_NUM_SDMA_ENGINES - first} from engine ${first})`,
    );
  }
  if (driver === 'upstream' && chipName === 'jkr') {
    throw usageError(
      '--chip jkr --driver upstream: upstream hfi1 does not drive the CN5000 (JKR); use --driver cornelis or hfi2',
    );
  }
  if (driver === 'upstream' && first !== 0) {
    throw usageError(
      `--driver upstream --engines ${first}-${last}: upstream hfi1 numbers its engines from 0 (num_sdma); an engine window that starts elsewhere needs --driver cornelis or hfi2`,
    );
  }
  if (ports === 2 && chipName !== 'jkr') {
    throw usageError('--ports 2 --chip wfr: a WFR adapter has one port; two ports need --chip jkr');
  }
  const activePorts =
    o.activePorts === undefined ? Array.from({ length: ports }, (_, i) => i + 1) : checkActivePorts(o.activePorts, ports);
  const amdHost = o.amdHost ?? chipName === 'jkr';
  const auto = defaultDriverSettings(driver, chipName, amdHost);
  const settings: DriverSettings =
    driver === 'upstream'
      ? auto
      : { ...auto, ...Object.fromEntries(Object.entries(o.settings ?? {}).filter(([, v]) => v !== undefined)) };
  if (!PAD_SDMA_DESC_VALUES.includes(settings.padSdmaDesc)) {
    throw usageError(`pad_sdma_desc must be one of ${PAD_SDMA_DESC_VALUES.join(', ')}, got ${settings.padSdmaDesc}`);
  }
  return {
    chip: chipModel(chipName),
    driver,
    module: moduleOf(driver),
    ports,
    activePorts,
    firstEngine: first,
    count,
    amdHost,
    settings,
    singleDescriptor: driver !== 'upstream' && o.singleDescriptor === true,
    classic: chipName === 'wfr' && driver === 'upstream' && ports === 1 && first === 0,
  };
}

/** The flavour as the contract describes a unit (UnitFlavour), with the emulator as its evidence. */
export function unitFlavour(f: EmuFlavour): UnitFlavour {
  return {
    module: f.module,
    chip: f.chip.name,
    driver: f.driver,
    ports: f.ports,
    evidence: [
      `the emulator (--chip ${f.chip.name} --driver ${f.driver}${f.ports === 2 ? ' --ports 2' : ''}${f.activePorts.length < f.ports ? ` --active-ports ${f.activePorts.join(',')}` : ''})`,
    ],
  };
}

/** The window as text: `8-15`, or `0-15`. */
export function windowText(f: Pick<EmuFlavour, 'firstEngine' | 'count'>): string {
  return engineIdsText(Array.from({ length: f.count }, (_, i) => f.firstEngine + i));
}

/**
 * CTRL bits the cornelis/hfi2 builds OR into every CTRL write (sdma_sendctrl, sdma.c): bit 4 when sdma_threshold ≠ 0
 * (and PRIORITY_THLD is written), bit 5 with sdma_single_descriptor. Not gated on the chip in the code: only the
 * automatic settings make them JKR-and-AMD-only.
 */
export function extraCtrlBits(f: EmuFlavour): number {
  if (f.driver === 'upstream') return 0;
  return (f.settings.sdmaThreshold !== 0 ? 0x10 : 0) | (f.singleDescriptor ? 0x20 : 0);
}
