// Check the Promela model with SPIN for every variant and set of senders up to --max (default 3), print one line per
// check (the verdicts, SPIN's states and memory) and, with --agree, the race explorer's verdicts beside them, with
// --story the step-by-step story of each counterexample as `hfi1-sdma emu race` tells it:
//
//   npx tsx spec/check.ts [--max N] [--variant NAME] [--senders qp,psm] [--agree] [--story] [--optimize]
//
// Exit status 1 when the two checkers disagree (with --agree) or a counterexample does not replay.
import { parseArgs } from 'node:util';
import { isVariant, VARIANTS, type Variant } from '../src/emu/race/variants.js';
import type { SenderKind } from '../src/emu/race/world.js';
import { agreement, senderMixes } from './agree.js';
import { Pan, type SpinProperty, type SpinResult, spinMissing } from './spin.js';
import { storyTable } from './story.js';

const { values } = parseArgs({
  options: {
    max: { type: 'string', default: '3' },
    variant: { type: 'string' },
    senders: { type: 'string' },
    agree: { type: 'boolean', default: false },
    story: { type: 'boolean', default: false },
    optimize: { type: 'boolean', default: false },
  },
});

const missing = await spinMissing();
if (missing) {
  process.stderr.write(`spec/check.ts: ${missing}\n`);
  process.exit(69);
}
const variants: Variant[] = values.variant === undefined ? [...VARIANTS] : [values.variant].filter(isVariant);
if (variants.length === 0) throw new Error(`--variant must be one of ${VARIANTS.join(', ')}`);
const max = Number(values.max);
const mixes: SenderKind[][] =
  values.senders === undefined
    ? Array.from({ length: max }, (_, i) => senderMixes(i + 1)).flat()
    : [values.senders.split(',').map((k) => k.trim() as SenderKind)];

const verdict = (r: SpinResult) => (r.verdict === 'lost' ? 'lost' : 'none');
const pan = await Pan.build({ optimize: values.optimize });
let failed = false;
try {
  for (const variant of variants) {
    for (const senders of mixes) {
      const started = process.hrtime.bigint();
      const line: string[] = [variant.padEnd(20), senders.join(',').padEnd(18)];
      let results: Record<SpinProperty, SpinResult>;
      if (values.agree) {
        const a = await agreement(pan, variant, senders, { shortest: senders.length <= 2 });
        results = a.spin;
        line.push(
          `window ${verdict(a.spin.window)} (explorer ${a.explorer.window ? 'lost' : 'none'})`,
          `for good ${verdict(a.spin.end)} (explorer ${a.explorer.forGood ? 'lost' : 'none'})`,
          a.agree ? 'agree' : 'DISAGREE',
        );
        failed ||= !a.agree;
      } else {
        results = {
          window: await pan.check(variant, senders, 'window', { trail: values.story }),
          end: await pan.check(variant, senders, 'end', { trail: values.story }),
        };
        line.push(`window ${verdict(results.window)}`, `for good ${verdict(results.end)}`);
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      line.push(
        `SPIN states ${results.window.states}/${results.end.states}`,
        `${Math.max(results.window.memoryMb, results.end.memoryMb).toFixed(0)} MB`,
        `${seconds.toFixed(1)} s`,
      );
      process.stdout.write(`${line.join('  ')}\n`);
      if (values.story) {
        for (const p of ['window', 'end'] as const) {
          const t = results[p].trail;
          if (t)
            process.stdout.write(
              `\n${p === 'window' ? 'Left asleep' : 'Left asleep for good'}:\n${storyTable(variant, senders, t)}\n`,
            );
        }
      }
    }
  }
} finally {
  pan.close();
}
process.exitCode = failed ? 1 : 0;
