// A regular file standing in for resource0 (shared with the benchmarks).
export { writeBarImage } from '../../src/emu/bar-image.js';
