// The exporter on an hfi2 unit whose engines are the window 8..15: hfi1_sdma_unit_info says what the unit is,
// and every engine label is the absolute hardware index.
import { describe, expect, it } from 'vitest';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { seriesOf, startTestExporter, value } from './harness.js';

const WINDOW = [8, 9, 10, 11, 12, 13, 14, 15];
// Engine 12 holds 300 descriptors in flight; the others 20.
const script: Script = (e, t) => (e === 12 ? { dh: 1000, dt: 1300 } : { dh: t + e, dt: t + e + 20 });

describe('exporter on an engine window', () => {
  it('serves hfi1_sdma_unit_info with module, chip, driver and ports', async () => {
    const x = await startTestExporter(
      new FakeBackend(script, 8, 2048, {
        engineIds: WINDOW,
        flavour: { module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2 },
      }),
    );
    const body = await x.scrape();
    expect(seriesOf(body, 'hfi1_sdma_unit_info')).toEqual([
      'hfi1_sdma_unit_info{unit="hfi2_0",name="CN5000",module="hfi2",chip="jkr",driver="hfi2",ports="2"} 1',
    ]);
    const engines = seriesOf(body, 'hfi1_sdma_free_descriptors').map((l) => /engine="(\d+)"/.exec(l)?.[1]);
    expect(engines).toEqual(WINDOW.map(String));
    expect(value(body, 'hfi1_sdma_in_flight_descriptors{unit="hfi2_0",engine="12"}')).toBe(300);
    expect(value(body, 'hfi1_sdma_in_flight_descriptors{unit="hfi2_0",engine="4"}')).toBeUndefined();
  });

  it('an upstream unit reads as Omni-Path 100 / wfr / upstream with engines 0..n-1', async () => {
    const x = await startTestExporter(new FakeBackend(script, 2));
    const body = await x.scrape();
    expect(seriesOf(body, 'hfi1_sdma_unit_info')).toEqual([
      'hfi1_sdma_unit_info{unit="hfi1_0",name="Omni-Path 100",module="hfi1",chip="wfr",driver="upstream",ports="1"} 1',
    ]);
    expect(value(body, 'hfi1_sdma_in_flight_descriptors{unit="hfi1_0",engine="1"}')).toBe(20);
  });
});
