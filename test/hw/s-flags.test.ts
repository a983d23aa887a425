// s_flags bit names per layout and driver dialect (rdmavt_qp.h and qp.h of each release).
import { describe, expect, it } from 'vitest';
import { decodeSFlags } from '../../src/hw/parse/s-flags.js';

describe('s_flags of the IFS 10.7 driver', () => {
  it('names TID_E_SENDING (0x10000000) beside WAIT_TID_RDMA, where upstream has WAIT_TID_SPACE', () => {
    expect(decodeSFlags(0x18001000, 'C', 'ifs-10.7').names).toEqual(['WAIT_DMA_DESC', 'TID_E_SENDING', 'WAIT_TID_RDMA']);
    expect(decodeSFlags(0x10000000, 'C', 'upstream').names).toEqual(['WAIT_TID_SPACE']);
    expect(decodeSFlags(0x01000000, 'C', 'ifs-10.7').names).toEqual(['0x1000000']);
  });
});
