// Text from a tree that reaches the terminal (the port's rate, the identity files) never carries a control
// character: a file holding one is not the kernel's and is refused or left out, never printed as it is.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isHfi1SdmaError, ParseError } from '../../src/errors.js';
import { identityValue, parsePortRate } from '../../src/hw/parse/link.js';
import { goodHfi2Tree } from './hfi2-tree.js';
import { cli, tempRoots } from './sources-tree.js';

const fresh = tempRoots();

describe('control characters in the port and identity files', () => {
  it.each(['400 Gb/sec (\x1b[2J)\n', '400 Gb/sec (4X\x07XDR)\n', '400 Gb/sec (\u009b31m)\n'])(
    'rate %j is a ParseError naming the file',
    (text) => {
      expect.assertions(2);
      try {
        parsePortRate(text, 'ports/1/rate');
      } catch (e) {
        expect(isHfi1SdmaError(e) && e.code).toBe('E_PARSE');
        expect((e as Error).message).toMatch(/^ports\/1\/rate:1:1:/);
      }
    },
  );

  it('an identity value with a C1 control is left out', () => {
    expect(identityValue('CN5000 \u009b2J board\n')).toBeNull();
    expect(identityValue('CN5000 board\n')).toBe('CN5000 board');
  });

  it('engines on a tree whose rate holds an escape sequence prints none', async () => {
    const t = goodHfi2Tree(fresh());
    writeFileSync(join(t.cls, 'ports/1/rate'), '400 Gb/sec (\x1b]0;x\x07)\n');
    writeFileSync(join(t.cls, 'board_id'), 'Cornelis \u009b2J\n');
    const r = await cli(t.root, ['engines']);
    expect(r.code, r.stderr).toBe(0);
    for (const c of ['\x1b', '\x07', '\u009b']) expect(`${r.stdout}${r.stderr}`).not.toContain(c);
  });
});

describe('the offending text a parse error quotes', () => {
  it('shows DEL and C1 controls escaped, as JSON shows C0 ones', () => {
    const e = new ParseError({ file: 'sdes', line: 1, column: 1, text: '\x7f\u009b2J\x1b' }, 'expected a header line');
    expect(e.message).toBe('sdes:1:1: expected a header line\n  "\\u007f\\u009b2J\\u001b"');
  });
});
