// The shared, pure logic of hfi1-sdma: identical against either backend.

export * from './chip.js';
export * from './classify.js';
export * from './constants.js';
export * from './csr.js';
export * from './descriptor.js';
export * from './descriptor-chip.js';
export * from './driver.js';
export * from './ring.js';
export * from './select.js';
export * from './seq.js';
export * from './state.js';
export * from './strand.js';
export * from './txreq.js';
export * from './waiters.js';
