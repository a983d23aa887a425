// Every kind of finding, once: its stable code, the count it adds to (the names health's -w/-c thresholds
// take), its severity under the default thresholds and its rank among findings of the same severity. Codes
// never change meaning; a new kind gets a new code.

/** The counts a finding adds to: engines, except where noted. */
export const COUNTS = [
  'gone', // units whose device is gone
  'stranded', // waiters certainly stranded
  'stalled',
  'halted',
  'unreadable', // units that could not be read
  'probable', // waiters probably stranded for PROBABLE_HOLD_MS or longer
  'psmstall', // PSM writer stall episodes
  'orphaned',
  'errors',
  'correctable',
  'notrunning',
  'linkdown', // ports that were ACTIVE and are not
  'noport', // units with no ACTIVE port
  'full',
  'ipoib', // IPoIB transmit queues the netdev watchdog timed out
  'linkflap', // ports whose link went down and came back, or retrains
] as const;
export type CountName = (typeof COUNTS)[number];

/** A finding's level: what Nagios calls CRITICAL, WARNING, UNKNOWN, and OK for a note. */
export type Severity = 'critical' | 'warning' | 'unknown' | 'note';

/** What one kind of finding is. */
export interface FindingKind {
  code: string;
  /** The count it adds to, or null for a note that counts for nothing. */
  count: CountName | null;
  /** Severity when the count exceeds no user threshold: the default thresholds' answer. */
  severity: Severity;
  /** A short title (`explain` lists them). */
  title: string;
}

/** Every kind of finding, by name; their order is the order of findings of one severity (worst first). */
export const FINDING_KINDS = {
  gone: { code: 'SD301', count: 'gone', severity: 'critical', title: 'device gone' },
  vanished: { code: 'SD302', count: 'gone', severity: 'critical', title: 'unit vanished' },
  stranded: { code: 'SD201', count: 'stranded', severity: 'critical', title: 'sender stranded (lost wake-up)' },
  stalled: { code: 'SD101', count: 'stalled', severity: 'critical', title: 'engine stalled' },
  fabricStall: {
    code: 'SD109',
    count: 'stalled',
    severity: 'critical',
    title: 'engines stalled by the fabric (no credits)',
  },
  linkStall: { code: 'SD110', count: 'stalled', severity: 'critical', title: "engines stalled while their port's link fails" },
  ipoibStuck: { code: 'SD207', count: 'ipoib', severity: 'critical', title: 'IPoIB queue stuck (netdev watchdog timeout)' },
  halted: { code: 'SD102', count: 'halted', severity: 'critical', title: 'engine halted' },
  unreadable: { code: 'SD303', count: 'unreadable', severity: 'unknown', title: 'unit unreadable' },
  noUnit: { code: 'SD304', count: null, severity: 'unknown', title: 'no unit found' },
  unjudged: { code: 'SD108', count: null, severity: 'unknown', title: 'engines cannot be judged (no ring state)' },
  probable: { code: 'SD202', count: 'probable', severity: 'warning', title: 'sender probably stranded, persisting' },
  psmStall: { code: 'SD203', count: 'psmstall', severity: 'warning', title: 'PSM writer stalls' },
  noActivePort: { code: 'SD305', count: 'noport', severity: 'warning', title: 'no ACTIVE port' },
  portDown: { code: 'SD306', count: 'linkdown', severity: 'warning', title: 'port went down' },
  portLost: { code: 'SD309', count: 'linkdown', severity: 'warning', title: 'port lost its link (LinkDowned counted it)' },
  linkFlap: { code: 'SD307', count: 'linkflap', severity: 'warning', title: 'port link went down and came back' },
  linkRetrain: { code: 'SD308', count: 'linkflap', severity: 'warning', title: 'port link retraining (LinkErrorRecovery)' },
  notRunning: { code: 'SD107', count: 'notrunning', severity: 'warning', title: 'engines not running' },
  orphanedWaiters: { code: 'SD204', count: 'orphaned', severity: 'warning', title: 'waiters orphaned on a stopped engine' },
  orphanedWork: { code: 'SD105', count: 'orphaned', severity: 'warning', title: 'orphaned txreqs on the flush list' },
  errors: { code: 'SD103', count: 'errors', severity: 'warning', title: 'engine errors rose' },
  correctable: { code: 'SD104', count: 'correctable', severity: 'warning', title: 'correctable error bits set' },
  full: { code: 'SD106', count: 'full', severity: 'note', title: 'ring persistently full' },
  probableShort: { code: 'SD205', count: null, severity: 'note', title: 'sender probably stranded, not yet certain' },
  errQp: { code: 'SD206', count: null, severity: 'note', title: 'QP in ERR left on a wait list' },
  reduced: { code: 'SD402', count: null, severity: 'note', title: 'reduced view (sources not readable)' },
  invisible: { code: 'SD401', count: null, severity: 'note', title: 'a kind of waiter cannot be seen here' },
  bulkService: { code: 'SD403', count: null, severity: 'note', title: 'the bulk service carries verbs traffic' },
  sdmaOff: { code: 'SD404', count: null, severity: 'note', title: 'SDMA off in cap_mask' },
  psmUnjudged: {
    code: 'SD405',
    count: null,
    severity: 'note',
    title: 'PSM writers waiting on a busy unit, their engine not known',
  },
} as const satisfies Record<string, FindingKind>;
export type FindingKindName = keyof typeof FINDING_KINDS;

/** Every finding's code (`SD101` …): a code never changes meaning, and a new kind gets a new one. */
export type FindingCode = (typeof FINDING_KINDS)[FindingKindName]['code'];

/** A probable strand counts (WARNING by default) once it has held this long: until then it is a note (ms). */
export const PROBABLE_HOLD_MS = 30_000;

/** Severity order, worst first. */
export const SEVERITY_ORDER: readonly Severity[] = ['critical', 'warning', 'unknown', 'note'];

/** The kinds in rank order, for sorting findings of one severity. */
export const KIND_RANK: ReadonlyMap<string, number> = new Map(Object.keys(FINDING_KINDS).map((k, i) => [k, i]));

/** The default thresholds: a count above its warning (critical) value raises that level; absent: never. */
export type Thresholds = Partial<Record<CountName, number>>;

/** Counts whose default severity is WARNING are warned above 0. */
export const DEFAULT_WARNING: Thresholds = Object.fromEntries(
  Object.values(FINDING_KINDS)
    .filter((k) => k.count !== null && k.severity === 'warning')
    .map((k) => [k.count, 0]),
) as Thresholds;

/** Counts whose default severity is CRITICAL are critical above 0. */
export const DEFAULT_CRITICAL: Thresholds = Object.fromEntries(
  Object.values(FINDING_KINDS)
    .filter((k) => k.count !== null && k.severity === 'critical')
    .map((k) => [k.count, 0]),
) as Thresholds;
