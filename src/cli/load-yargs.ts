// yargs, loaded without the cost of its text layout. cliui (through string-width) builds an Intl.Segmenter when its
// module is evaluated, and the first one a process builds loads ICU's segmentation data: about 50 ms of every start
// that parses with yargs (a third of what loading yargs costs), though only help and usage text ever segment a
// string. While yargs loads, Intl.Segmenter makes a stand-in that builds the real segmenter on its first use; the
// real constructor is put back as soon as the import settles, so nothing else in the process sees the stand-in.
// (The offline artifact, which bundles yargs, also rewrites string-width's line at build time: scripts/bundle.ts.)

type SegmenterArgs = ConstructorParameters<typeof Intl.Segmenter>;

/** yargs' factory, its segmenter built on first use. */
export async function loadYargs(): Promise<typeof import('yargs').default> {
  const real = Intl.Segmenter;
  class DeferredSegmenter {
    readonly #args: SegmenterArgs;
    #made: Intl.Segmenter | undefined;
    constructor(...args: SegmenterArgs) {
      this.#args = args;
    }
    #real(): Intl.Segmenter {
      this.#made ??= new real(...this.#args);
      return this.#made;
    }
    segment(input: string): Intl.Segments {
      return this.#real().segment(input);
    }
    resolvedOptions(): Intl.ResolvedSegmenterOptions {
      return this.#real().resolvedOptions();
    }
  }
  Object.defineProperty(Intl, 'Segmenter', { value: DeferredSegmenter, writable: true, configurable: true });
  try {
    return (await import('yargs')).default;
  } finally {
    Object.defineProperty(Intl, 'Segmenter', { value: real, writable: true, configurable: true });
  }
}
