// The emulated unit's identity (what the RDMA core, the module loader, the PCI core and procfs
// would show for a 100-series adapter or a CN5000) and the rate of its ports. Its kernel log as /dev/kmsg shows it is
// rendered by kmsg.ts.
import type { UnitContext } from '../backend.js';

/** The kernel command line the emulated host booted with (/proc/cmdline). */
export const EMU_CMDLINE =
  'BOOT_IMAGE=(hd0,gpt2)/vmlinuz-5.14.0-427.13.1.el9_4.x86_64 root=/dev/mapper/rhel-root ro intel_iommu=on iommu=pt\n';

/** The PCI identity beyond vendor and device (the PCI core's sysfs attributes) of a 100-series HFI. */
export const EMU_PCI_IDENTITY: Readonly<Record<string, string>> = Object.freeze({
  subsystem_vendor: '0x8086',
  subsystem_device: '0xe2ff',
  revision: '0x11',
  class: '0x0c8000',
  max_link_speed: '8.0 GT/s PCIe',
  max_link_width: '16',
});

/**
 * The chip's CCE_REVISION register (chip_registers.h: CHIP_REV_MINOR bits 0-7, CHIP_REV_MAJOR 8-15, SW 24-31), from
 * which the driver takes majrev and minrev (hfi1_init_dd, chip.c), prints `boardversion` as `ChipABI %u.%u, ChipRev
 * %u.%u, SW Compat %llu` and `hw_rev` as minrev in hex (hw_rev_show, sysfs.c). A 100-series HFI is WFR B1: ChipRev
 * 7.17 (minor 0x11, the B revisions being 0x1x: is_bx, chip.c; the PCI revision is 0x11 too). The CN5000's numbers
 * are not public: 1.0 is a choice.
 */
export const EMU_CCE_REVISION = { wfr: 0x03_00_07_11n, jkr: 0x03_00_01_00n } as const;

/** HFI1_CHIP_VERS_MAJ.HFI1_CHIP_VERS_MIN, the ChipABI the driver prints (hfi.h). */
const CHIP_ABI = '3.0';

/** `boardversion` and `hw_rev` as the driver derives them from CCE_REVISION (hfi1_init_dd, chip.c; hw_rev_show, sysfs.c). */
export function revisionFiles(cceRevision: bigint): { boardVersion: string; hwRev: string } {
  const minor = Number(cceRevision & 0xffn);
  const major = Number((cceRevision >> 8n) & 0xffn);
  const sw = Number((cceRevision >> 24n) & 0xffn);
  return { boardVersion: `ChipABI ${CHIP_ABI}, ChipRev ${major}.${minor}, SW Compat ${sw}`, hwRev: minor.toString(16) };
}

/** A plausible host and adapter: the values the emulator's sysroot shows. */
export const EMU_CONTEXT: Readonly<UnitContext> = Object.freeze({
  kernelRelease: '5.14.0-427.13.1.el9_4.x86_64',
  driverVersion: '10.14.0.0',
  driverSrcversion: '3F2A9C1D0B7E4A6C58D1E20',
  fwVer: '1.27.0',
  boardId: 'Intel Omni-Path Host Fabric Interface Adapter 100 Series',
  serial: '0x0063a4c5',
  ...revisionFiles(EMU_CCE_REVISION.wfr),
  pciLinkSpeed: '8.0 GT/s PCIe',
  pciLinkWidth: '16',
});

/** A CN5000 (JKR) adapter's identity where it differs from the 100-series one (a PCIe 5.0 x16 SuperNIC). */
export const EMU_CONTEXT_JKR: Readonly<UnitContext> = Object.freeze({
  ...EMU_CONTEXT,
  boardId: 'Cornelis Omni-Path Express SuperNIC CN5000',
  ...revisionFiles(EMU_CCE_REVISION.jkr),
  pciLinkSpeed: '32.0 GT/s PCIe',
});

/** The identity of the emulated adapter on `chip`. */
export function emuContext(chip: 'wfr' | 'jkr'): Readonly<UnitContext> {
  return chip === 'jkr' ? EMU_CONTEXT_JKR : EMU_CONTEXT;
}

/** The port's rate line (rate_show, RDMA core sysfs.c) for a 4X EDR link (Omni-Path 100). */
export const EMU_RATE = '100 Gb/sec (4X EDR)';
/**
 * The rate line of a CN5000 port: 400 Gb/s over four lanes. How hfi2 reports its speed to the RDMA core is
 * not public; the emulator shows the 4X NDR line the core prints for 400 Gb/s (a choice).
 */
export const EMU_RATE_JKR = '400 Gb/sec (4X NDR)';

/**
 * The `cap_mask` module parameter as a freshly loaded driver shows it (hfi1_caps_get, driver.c): HFI1_CAP_MASK_DEFAULT
 * (common.h: SDMA, EXTENDED_PSN, HDRSUPP, MULTI_PKT_EGR, the two NODROP bits, PRINT_UNIMPL, PKEY_CHECK,
 * STATIC_RATE_CTRL and AIP for the kernel; HDRSUPP, MULTI_PKT_EGR, STATIC_RATE_CTRL, PKEY_CHECK and
 * EARLY_CREDIT_RETURN for users, shifted by HFI1_CAP_USER_SHIFT 24) with the kernel's HFI1_CAP_K2U bits reflected into
 * the user half. USE_SDMA_HEAD (bit 6) and SDMA_HEAD_CHECK (bit 17) are off.
 */
export const EMU_CAP_MASK = 0x4c09a08cb9a;

/** The rate line of a port of `chip`. */
export function portRate(chip: 'wfr' | 'jkr'): string {
  return chip === 'jkr' ? EMU_RATE_JKR : EMU_RATE;
}
