// Choosing a backend from the global options (DESIGN.md: --backend auto|hw|emu).
import type { Backend } from '../backend.js';
import type { GlobalOptions } from './context.js';
import type { Io } from './io.js';

/** The sysroot prefix: --sysroot, else HFI1_SDMA_SYSROOT (folded into --sysroot), else `/`. */
export function sysrootOf(global: GlobalOptions): string {
  return global.sysroot && global.sysroot !== '' ? global.sysroot : '/';
}

/**
 * Open the selected backend. `auto` uses the live host (or the --sysroot tree) when it has an
 * hfi1 unit and the emulator otherwise, saying so in one line on stderr.
 */
export async function openBackend(global: GlobalOptions, io: Io): Promise<Backend> {
  // Backends load on demand: a command that needs only one of them starts faster.
  const createEmuBackend = async (g: GlobalOptions) => (await import('../emu/index.js')).createEmuBackend(g);
  if (global.backend === 'emu') return createEmuBackend(global);
  const sysroot = sysrootOf(global);
  if (/\.(tar\.gz|tgz)$/.test(sysroot)) return snapshotBackend(sysroot);
  const { findUnits, openHwBackend } = await import('../hw/index.js');
  if (global.backend === 'hw') return openHwBackend({ sysroot });
  const units = await findUnits(sysroot);
  if (units.length > 0) return openHwBackend({ sysroot });
  const where = sysroot === '/' ? '/sys/class/infiniband' : `${sysroot}/sys/class/infiniband`;
  io.stderr(`hfi1-sdma: no hfi1 unit under ${where}: using the emulator (--backend emu; --backend hw to insist on hardware)\n`);
  return createEmuBackend(global);
}

/** The live-host backend over an unpacked snapshot; closing it removes the unpacked tree. */
async function snapshotBackend(file: string): Promise<Backend> {
  const { openSnapshot } = await import('../snapshot/capture.js');
  const { openHwBackend } = await import('../hw/index.js');
  const snap = await openSnapshot(file);
  try {
    const inner = await openHwBackend({ sysroot: snap.sysroot });
    return {
      kind: inner.kind,
      units: () => inner.units(),
      unit: (n) => inner.unit(n),
      close: async () => {
        await inner.close();
        await snap.close();
      },
    };
  } catch (e) {
    await snap.close();
    throw e;
  }
}
