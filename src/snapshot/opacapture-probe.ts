// Telling an opacapture tarball from an hfi1-sdma snapshot before unpacking either: opacapture.sh tars its capture
// directory first (`tar czf FILE tmp/capture<PID> …`), so the archive's first entry is that directory; a snapshot
// opens with its own files. Only the first header block is read.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

/** The name in a tar header block (its first 100 bytes, up to the first NUL), or null for a block that is not one. */
export function tarEntryName(block: Uint8Array): string | null {
  if (block.length < 512) return null;
  const end = block.indexOf(0);
  const name = Buffer.from(block.subarray(0, end < 0 || end > 100 ? 100 : end)).toString('latin1');
  const magic = Buffer.from(block.subarray(257, 262)).toString('latin1');
  return magic === 'ustar' ? name : null;
}

/** Whether a gzip'd tar's first entry is an opacapture's capture directory; false for anything else or unreadable. */
export async function isOpacaptureArchive(file: string): Promise<boolean> {
  const chunks: Buffer[] = [];
  let got = 0;
  try {
    const gunzip = createReadStream(file).pipe(createGunzip());
    for await (const chunk of gunzip) {
      chunks.push(chunk as Buffer);
      got += (chunk as Buffer).length;
      if (got >= 512) {
        gunzip.destroy();
        break;
      }
    }
  } catch {
    return false;
  }
  const name = tarEntryName(Buffer.concat(chunks));
  return name !== null && /^(?:\.\/)?tmp\/capture[0-9]{1,10}(?:\/|$)/.test(name);
}
