// The port series join node_exporter's infiniband collector as the README says: an emulated two-port CN5000 kept
// live by `emu serve` (port 1's credits stop: fabric-stall), read by `hfi1-sdma export` and by Debian's
// prometheus-node-exporter (--path.sysfs at the same tree, the infiniband collector only), both scraped by a real
// Prometheus; the README's joins, evaluated through its HTTP API, give the stalled port with node_exporter's view of
// it and the adapter's firmware. Waits on each condition, never on time; every process is stopped after the file.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, startChild, startExporterChild } from '../support/child.js';
import { freePort, hasPrometheus, prometheusHarness, until } from '../support/prometheus.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const NODE_EXPORTER = 'prometheus-node-exporter';
const hasNodeExporter = spawnSync(NODE_EXPORTER, ['--version'], { stdio: 'ignore' }).status === 0;
const prometheus = prometheusHarness();
const tmp = tempDirs('ne-join-');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** The README's worked joins, taken from its text (so the test runs what an operator copies). */
function documentedJoins(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('<!-- node-exporter-join -->'), readme.indexOf('<!-- /node-exporter-join -->'));
  return [...section.matchAll(/```promql\n([\s\S]*?)```/g)].map((m) => (m[1] as string).trim());
}

describe('the port series join node_exporter’s infiniband collector', () => {
  it.runIf(hasPrometheus && hasNodeExporter)(
    'a fabric-stalled port with node_exporter’s state and firmware, through the real Prometheus (run only when prometheus and prometheus-node-exporter are installed)',
    { timeout: 150_000 },
    async () => {
      const joins = documentedJoins();
      expect(joins).toHaveLength(2);
      const dir = tmp();
      const serve = startChild([
        // A two-port CN5000 under a light load (the serving process keeps up with wall time on a loaded machine).
        ...'--chip jkr --driver cornelis --ports 2 --engines 4 --workload qp:gbps=5'.split(' '),
        ...['--fault', 'fabric-stall@1500:1', 'emu', 'serve', '--sysroot', dir, '--interval-ms', '100'],
      ]);
      children.push(serve.child);
      const counters = join(dir, 'sys/class/infiniband/hfi1_0/ports/1/counters/port_xmit_data');
      await until(`the served tree (serve said: ${serve.err()})`, 30_000, async () => (existsSync(counters) ? true : undefined));

      const nodePort = await freePort();
      const node = spawn(
        NODE_EXPORTER,
        [
          `--path.sysfs=${join(dir, 'sys')}`,
          `--path.procfs=${join(dir, 'proc')}`,
          '--collector.disable-defaults',
          '--collector.infiniband',
          `--web.listen-address=127.0.0.1:${nodePort}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(node);
      let nodeLog = '';
      node.stderr?.on('data', (d) => {
        nodeLog += String(d);
      });
      const x = await startExporterChild(
        ['--sysroot', dir, 'export', '--listen', '127.0.0.1:0', '--min-interval-ms', '200', '--stall-ms', '1000'],
        children,
      );
      const exporterPort = Number(/serving http:\/\/\S+:(\d+)\/metrics/.exec(x.stderr())?.[1]);
      const prom = await prometheus.start([
        { job: 'hfi1-sdma', target: `127.0.0.1:${exporterPort}` },
        { job: 'node', target: `127.0.0.1:${nodePort}` },
      ]);

      // Both sides name the same ports by the same labels.
      const paired = await until(
        `both jobs' port series (node_exporter said: ${nodeLog}; prometheus: ${prom.log()})`,
        60_000,
        async () => {
          const r = await prom.query(
            'label_replace(hfi1_sdma_port_xmit_packets_total, "host", "$1", "instance", "(.+):[0-9]+") + on (host, device, port) label_replace(node_infiniband_port_packets_transmitted_total, "host", "$1", "instance", "(.+):[0-9]+")',
          );
          return r.data.result?.length === 2 ? r.data.result : undefined;
        },
      );
      expect(paired.map((s) => `${s.metric.device}/${s.metric.port}`).sort()).toEqual(['hfi1_0/1', 'hfi1_0/2']);

      // The first join: the port the fabric stalled, ACTIVE in node_exporter's eyes.
      const [stalledJoin, firmwareJoin] = joins as [string, string];
      const stalled = await until(`the fabric-stalled port in the join (serve said: ${serve.err()})`, 90_000, async () => {
        const r = await prom.query(stalledJoin);
        return r.data.result?.length ? r.data.result : undefined;
      });
      expect(stalled.map((s) => ({ device: s.metric.device, port: s.metric.port, host: s.metric.host }))).toEqual([
        { device: 'hfi1_0', port: '1', host: '127.0.0.1' },
      ]);
      // The second: every port's XmitWait rate with the adapter's firmware and board from node_exporter.
      // (Waiting for port 1's rate to be above 0: the rate needs two scrapes of the stalled port.)
      const firmware = await until('the firmware join, port 1 waiting', 30_000, async () => {
        const r = await prom.query(firmwareJoin);
        const p1 = r.data.result?.find((s) => s.metric.port === '1');
        return r.data.result?.length === 2 && Number(p1?.value[1]) > 0 ? r.data.result : undefined;
      });
      for (const s of firmware) {
        expect(s.metric).toMatchObject({ device: 'hfi1_0', firmware_version: expect.any(String) });
        expect(s.metric.board_id).toMatch(/CN5000/);
      }
      expect(Number(firmware.find((s) => s.metric.port === '1')?.value[1])).toBeGreaterThan(0);
    },
  );
});
