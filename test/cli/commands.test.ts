// The light command table that --help lists matches the commands it loads on demand.
import { describe, expect, it } from 'vitest';
import { COMMAND_TABLE, commandName, commandsFor } from '../../src/cli/commands.js';

describe('command table', () => {
  it.each(COMMAND_TABLE.map((e) => [e.command, e] as const))(
    '%s: the loaded spec has the same command and description',
    async (_c, entry) => {
      const spec = await entry.load();
      expect(spec.command).toBe(entry.command);
      expect(spec.describe).toBe(entry.describe);
    },
  );

  it('loads only the command that runs', async () => {
    const specs = await commandsFor('health');
    const loaded = specs.filter((s) => s.builder !== undefined || s.fallback !== undefined).map((s) => commandName(s.command));
    expect(loaded).toEqual(['health']);
  });
});
