// Which `s_flags` layout one `qp_stats` file is read in: its format first, then the values it shows, then the
// caller's hint (the kernel release or module version), then a stated default.
import type { SFlagsDialect, SFlagsLayout } from './s-flags.js';

/** How the layout of a file was decided. */
export type LayoutBasis = 'format' | 'value' | 'hint' | 'default';

/** The layout a whole file is read in, why, and the evidence (a line and what it showed). */
export interface LayoutDecision {
  layout: SFlagsLayout;
  dialect: SFlagsDialect;
  basis: LayoutBasis;
  evidence: string;
  /** True when another layout would read the same file differently and nothing ruled it out. */
  ambiguous: boolean;
}

/** The qp_stats format families (qp_iter_print of each era): staging, s_hdrwords, current, IFS with and without s_hdrwords. */
export type FormatFamily = 'staging' | 'hdrwords' | 'current' | 'ifs-hdrwords' | 'ifs';

/** Any bit at or above HFI1_S_MIN_BIT_MASK (qp.h) exists only in layout C. */
const LAYOUT_C_ONLY = 0xff000000;
/** AHG_VALID, AHG_CLEAR and ECN of layout B: bits that upstream layout C leaves unused. */
const LAYOUT_B_HIGH = 0x380000;
/** ECN of layout B: a bit layout A leaves unused. */
const LAYOUT_B_ECN = 0x200000;

/**
 * Decide the layout of one file: the format first, then the values (`flags`, with their line numbers),
 * then the caller's hint (from the kernel release or the module version), then a default.
 */
export function decideLayout(
  family: FormatFamily,
  flags: readonly (readonly [line: number, sFlags: number])[],
  hint?: SFlagsLayout,
): LayoutDecision {
  if (family === 'current') {
    return {
      layout: 'C',
      dialect: 'upstream',
      basis: 'format',
      evidence: 'no s_hdrwords before f= (qp_iter_print of kernels with layout C)',
      ambiguous: false,
    };
  }
  if (family === 'ifs') {
    return {
      layout: 'C',
      dialect: 'ifs-10.8',
      basis: 'format',
      evidence: "IFS 'W … pf=' without s_hdrwords (IFS 10.8 and later)",
      ambiguous: false,
    };
  }
  if (family === 'ifs-hdrwords') {
    // UNSURE: the TID bits in rdmavt are those of IFS 10.7 (rdmavt_qp.h of that release); 10.5 and 10.6 print the
    // same format and may lack them, which only changes the names of bits they never set.
    return {
      layout: 'C',
      dialect: 'ifs-10.7',
      basis: 'format',
      evidence: "IFS 'W … pf=' with s_hdrwords (IFS 10.5 to 10.7)",
      ambiguous: false,
    };
  }
  // The staging driver never had layout C: a high bit there is no evidence for it.
  for (const [line, v] of family === 'staging' ? [] : flags) {
    if ((v & LAYOUT_C_ONLY) >>> 0 !== 0) {
      return {
        layout: 'C',
        dialect: 'upstream',
        basis: 'value',
        evidence: `line ${line}: f=${v.toString(16)} has a driver bit at or above 0x1000000 (layout C only)`,
        ambiguous: false,
      };
    }
  }
  // Against layout A (staging) only ECN of layout B (0x200000) is unused; against C all three high bits of B are.
  const bHigh = family === 'staging' ? LAYOUT_B_ECN : LAYOUT_B_HIGH;
  for (const [line, v] of flags) {
    if ((v & bHigh) >>> 0 !== 0) {
      return {
        layout: 'B',
        dialect: 'upstream',
        basis: 'value',
        evidence: `line ${line}: f=${v.toString(16)} has a bit only layout B defines there (AHG_VALID 0x80000, AHG_CLEAR 0x100000, ECN 0x200000)`,
        ambiguous: false,
      };
    }
  }
  if (hint)
    return { layout: hint, dialect: 'upstream', basis: 'hint', evidence: `the caller named layout ${hint}`, ambiguous: false };
  // UNSURE: both older families span a layout switch. The staging format (QP%u, qp_iter_print of the staging
  // driver) was printed with layout A (v4.3, private HFI1_S_* in verbs.h) and with layout B (after Adaptive PIO and
  // in rdmavt's first layout); the s_hdrwords formats span B (v4.6 to about v4.13) and C (from about v4.14). We
  // choose B for both: most kernels of each span used it, and a layout-C kernel of that window is usually decided
  // by value first (HFI1_S_AHG_VALID, qp.h, is set on RC QPs that used AHG). A wrong guess misnames bits 0x800 and
  // up; the decision says `ambiguous` so a caller can ask for the kernel release instead.
  return {
    layout: 'B',
    dialect: 'upstream',
    basis: 'default',
    evidence:
      family === 'staging'
        ? 'staging format (QP%u): layout A or B, no value told them apart; B assumed (give the kernel release to decide)'
        : 's_hdrwords before f=: layout B or C, no value told them apart; B assumed (give the kernel release to decide)',
    ambiguous: true,
  };
}
