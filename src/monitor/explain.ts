// What each finding means, for `hfi1-sdma explain CODE` and the manual page: the kernel code it is about, how to
// confirm it, what to do and what to capture before anything is reset. One entry per code of codes.ts (a test
// fails on a code without one). Where the tool cannot know something, the text says so.
import { FINDING_KINDS, type FindingKindName } from './codes.js';

/** The explanation of one finding. */
export interface Explanation {
  /** What the finding says about the engine, the sender or the unit. */
  meaning: string;
  /** The kernel code (function, file) the finding concerns, and the fixes that matter to it. */
  kernel: string;
  /** How to confirm it by hand. */
  confirm: string;
  /** What to do. */
  action: string;
  /** What to capture for the vendor or the next shift, before a reset destroys the evidence. */
  capture: string;
}

const SNAPSHOT =
  "'hfi1-sdma snapshot -o node.tar.gz --samples 10 --interval-ms 500' (as root), and 'dmesg' or 'journalctl -k' since boot";

/** Every finding's explanation, by kind. */
export const EXPLANATIONS: Readonly<Record<FindingKindName, Explanation>> = {
  gone: {
    meaning:
      "The unit's registers read all-ones: the adapter was reset or fell off the PCI bus. Every sender on it is stuck, and nothing the driver does with the engines can work until the device is back.",
    kernel:
      'PCIe: the device stopped answering reads (a surprise removal, a fatal AER error, a firmware reset). The driver sees the same all-ones; sdma_seqfile_dump_sde (sdma.c) prints them.',
    confirm: "'lspci -s <pci>' (the device absent or its header all ff), 'dmesg | grep -i -e aer -e hfi' for PCIe errors.",
    action:
      "Check the slot and the link; then reload the driver ('modprobe -r hfi1; modprobe hfi1', or hfi2) or reboot the node. Drain the node from the scheduler first.",
    capture: `The kernel log since boot and 'lspci -vvv -s <pci>'; ${SNAPSHOT} shows what was left.`,
  },
  vanished: {
    meaning:
      'The unit was listed and is no longer: its sysfs and debugfs directories went away (the driver was unloaded, or the device was removed). Until it is back, nothing is read of it.',
    kernel: 'The RDMA core removed the ib_device (hfi1_remove / the driver unload); the PCI device may still be present.',
    confirm: "'ls /sys/class/infiniband', 'lsmod | grep hfi', 'lspci' for the adapter.",
    action: 'If the driver was unloaded on purpose, nothing; otherwise find out why (dmesg) and load it again.',
    capture: 'The kernel log around the time it vanished.',
  },
  stranded: {
    meaning:
      'A sender (a QP, or an IPoIB queue) sleeps on the wait list of an engine that is running, empty and quiet: the wake-up it waited for was lost. A QP has no timer: it waits until other traffic uses that engine, or until it is destroyed. Its MPI job hangs.',
    kernel:
      'sdma_check_progress (sdma.c) reads the free count before it samples the head-lock sequence; a retirement that runs entirely between the two is invisible to sdma_progress, and its sdma_desc_avail ran before the sender was queued. Related upstream fixes: "IB/hfi1: Close PSM sdma_progress sleep window" and "IB/hfi1: Wakeup QPs orphaned on wait list after flush" (both in v5.2). The window is there in every version of the driver read (up to the 2024 sources).',
    confirm:
      "'hfi1-sdma waiters <engine>' over a few seconds: the verdict stays stranded, the engine's heads and interrupt counts do not move ('hfi1-sdma show <engine>'). debugfs qp_stats shows the QP with RVT_S_WAIT_DMA_DESC set and on a list.",
    action:
      "Any traffic on that engine releases it: it serves the VL shown by sysfs sdma<N>/vl (and the CPUs of cpu_list); a job sending on that VL from those CPUs rescues it. Or end the job that owns the QP (destroying the QP frees it). 'hfi1-sdma waiters', health and the finding name the owner (pid, command, user): from the kernel's resource tracking through 'rdma -j res show qp' (iproute2) when it is installed, else from the PID qp_stats prints, checked in /proc (that is the creating thread: it may have exited, or its pid been reused, and the note says so). Confirm before ending a job.",
    capture: `${SNAPSHOT}: the snapshot holds qp_stats, the engine's registers, the log lines and the owners of the stranded QPs as they were.`,
  },
  stalled: {
    meaning:
      'An engine has work in flight, is running, and its head has not moved for --stall-ms, confirmed by a second sample. Senders asleep on it will not wake. chip-not-fetching: the hardware head and the fetched counter are frozen while the hardware tail is ahead. retirement-lost: the chip moved past the software head (a lost interrupt or a stuck handler).',
    kernel:
      'The engine state machine (sdma_process_event, sdma.c) and the interrupt path (sdma_engine_interrupt, sdma_make_progress). A chip that stops fetching is below the driver; a lost retirement is the interrupt or its handler.',
    confirm:
      "'hfi1-sdma show <engine>' twice: H(HW) and desc fetched unchanged (not fetching) or H(HW) ahead of H(SW) (retirement lost); '/proc/interrupts' for the engine's vector (interrupts arriving or not).",
    action:
      "Capture first. Then check the link ('hfi1-sdma engines' shows every port), PCIe errors (dmesg, AER counters) and the firmware. A driver reload or a node reboot clears it and destroys the evidence.",
    capture: `${SNAPSHOT}; also 'cat /proc/interrupts' and the adapter's firmware version (fw_ver).`,
  },
  halted: {
    meaning:
      'An engine is halted beyond the recovery window: SEND_DMA_STATUS says halted, a halt-class error bit is set, or it stays in a state other than running or idle. The driver normally recovers within a millisecond; one that stays halted does not send.',
    kernel:
      'sdma_engine_error (sdma.c) takes the engine through halt, clean-up and restart (sdma_process_event: s50_HwHaltWait, s60_IdleHalt, s15_HwStartUpCleanWait…). A halt that does not end is a clean-up that never completes.',
    confirm:
      "'hfi1-sdma show <engine>' decodes CTRL, STATUS and ENG_ERR_STATUS; 'hfi1-sdma log' decodes the kernel's engine-error lines (the bits and the state at the error).",
    action: 'Capture, then reload the driver or reboot the node; report the error bits to the vendor.',
    capture: `${SNAPSHOT}, and 'hfi1-sdma log' of the kernel log (the engine-error and ring-dump lines).`,
  },
  unreadable: {
    meaning:
      'A unit could not be read this time: a source failed (malformed, permission denied) or did not answer in time. Its engines are not judged.',
    kernel: 'None: this is the reading side (debugfs, sysfs, the BAR).',
    confirm: "'hfi1-sdma doctor' lists every source of the unit, whether it is readable, why not and the fix.",
    action: 'Fix what doctor names (mount debugfs, run as root, boot with iomem=relaxed for the BAR).',
    capture: "'hfi1-sdma doctor --json'.",
  },
  noUnit: {
    meaning: 'No hfi1 or hfi2 unit was found: the driver did not load, or the adapter is missing.',
    kernel: 'The RDMA core lists no hfi1_N or hfi2_N under /sys/class/infiniband.',
    confirm: "'lsmod | grep hfi', 'lspci -d 8086:24f0', 'lspci -d 434e:', 'dmesg | grep -i hfi'.",
    action: 'Load the driver; check the adapter and its firmware.',
    capture: "'hfi1-sdma doctor --json' and the kernel log.",
  },
  unjudged: {
    meaning:
      'Only interrupt counts can be read of these engines (no sdes, no BAR: run without root), and they did not move: an idle engine and one stopped with work in flight look alike, so they cannot be judged.',
    kernel:
      'debugfs sdes (sdma_seqfile_dump_sde) and the BAR give the heads and tails; /proc/interrupts and hw_counters only counts.',
    confirm: "'hfi1-sdma doctor' names the sources that are not readable and why.",
    action: 'Run as root, with debugfs mounted (mount -t debugfs none /sys/kernel/debug).',
    capture: 'Nothing until it can be read.',
  },
  probable: {
    meaning:
      "A sender sleeps on the engine qp_stats printed, which is running, empty and quiet, but another engine of its VL stayed busy and short of room for 30 s or more: it may be a legitimate waiter there. Normal waiters are woken within a ring's drain time.",
    kernel:
      'qp_stats (qp_iter_print, qp.c) prints the engine recomputed at print time (qp_to_sdma_engine); the QP may sleep on any engine of its VL. sdma_desc_avail (sdma.c) wakes waiters in list order, at most 20 per pass, stopping at the first that does not fit.',
    confirm:
      "'hfi1-sdma waiters <engine>' again: the verdict turns certain (stranded) once every other engine of the VL is idle or retires a whole ring with room; 'hfi1-sdma engines' shows the siblings' free counts.",
    action:
      "Watch it; if it persists while the VL is saturated, find the QP's owner (as for a stranded one) and ask whether its job progresses.",
    capture: SNAPSHOT,
  },
  psmStall: {
    meaning:
      'PSM writers blocked up to 1 s while their unit was idle: each is a lost wake-up, which a PSM writer survives because it gives up after SDMA_IOWAIT_TIMEOUT (1 s), leaves the list and retries. Not a hang: a job that keeps hitting it runs slowly.',
    kernel:
      'defer_packet_queue (user_sdma.c) sleeps under the engine\'s waitlock; before "IB/hfi1: Close PSM sdma_progress sleep window" (v5.2) the check ran outside it and a writer could hang. The 2020 fixes "Ensure pq is not left on waitlist" and "Fix another case where pq is left on waitlist" concern a timed-out writer left queued.',
    confirm:
      "'hfi1-sdma waiters' over a few seconds names the writers (pid and command, as root); the hfi1_usdma_defer and hfi1_usdma_we trace events show each wait.",
    action:
      "Check the kernel carries the fixes above ('hfi1-sdma doctor' compares its release); report a recurring stall with a snapshot.",
    capture: SNAPSHOT,
  },
  noActivePort: {
    meaning:
      'No port of the unit is ACTIVE: SDMA stays disabled and every engine sits idle (s20_Idle). Nothing is sent. A CN5000 whose port 2 is ACTIVE is fine with port 1 unused.',
    kernel:
      'The link state machine takes the engines idle when the port leaves ACTIVE (sdma_all_idle through the link-down path) and back when it is ACTIVE again.',
    confirm: "'opainfo' (physical state, link quality), 'hfi1-sdma engines' shows every port beside the engines.",
    action: 'Check the cable, the switch port and the fabric manager.',
    capture: "'opainfo' and the kernel log of the link going down.",
  },
  portDown: {
    meaning:
      'A port that was ACTIVE is not: whatever ran over it stopped, although the other port of a two-port adapter may still carry traffic.',
    kernel: "The RDMA core's ports/<N>/state and phys_state (state_show, phys_state_show).",
    confirm: "'opainfo' for that port; 'hfi1-sdma engines' shows its state.",
    action: "Check its cable and switch port; the fabric manager's view of the link.",
    capture: "'opainfo' and the kernel log of the link change.",
  },
  notRunning: {
    meaning:
      'Engines are in an idle state with SDMA disabled while a port is ACTIVE: they were stopped (a clean-up in progress, a halt that ended in idle), not idled by the link.',
    kernel: 'sdma_process_event (sdma.c): an operational state other than s99_Running.',
    confirm: "'hfi1-sdma show <engine>' (state and CTRL), 'hfi1-sdma log' for state changes.",
    action: 'If it lasts, capture and reload the driver.',
    capture: SNAPSHOT,
  },
  orphanedWaiters: {
    meaning:
      'Senders wait on an engine that is not running: they wait for a port to come up or the engine to restart. On kernels before v5.2 a flush could leave them queued for good.',
    kernel: 'sdma_flush (sdma.c); "IB/hfi1: Wakeup QPs orphaned on wait list after flush" (v5.2) wakes every waiter on a flush.',
    confirm: "'hfi1-sdma waiters' (verdict orphaned) and the engine's state in 'hfi1-sdma show'.",
    action: 'Bring the port or engine back; on an older kernel, end the jobs whose QPs stay orphaned after it is running.',
    capture: SNAPSHOT,
  },
  orphanedWork: {
    meaning: "The engine's flush list stayed non-empty beyond the recovery window: txreqs that nobody will complete.",
    kernel: 'sdma_flush and the flush worker (sdma.c) complete the flush list with ABORTED.',
    confirm: "'hfi1-sdma show <engine>': FLNE 1 over several samples.",
    action: 'Capture and reload the driver if it persists.',
    capture: SNAPSHOT,
  },
  errors: {
    meaning:
      "The engine's error-interrupt count (SDMAErrCt) rose while it was watched. A halt-class error runs its halt, clean-up and restart in under a millisecond, so the bits are usually gone by the next sample: the count is what shows it.",
    kernel: 'sdma_engine_error (sdma.c) and the engine-error interrupt (chip.c) count it and log the bits.',
    confirm: "'hfi1-sdma log' of the kernel log decodes each engine-error line (the bits and the state).",
    action: 'One now and then is recovered by the driver; a rising count is worth a report with the bits.',
    capture: "'hfi1-sdma log --json' of the kernel log, and a snapshot.",
  },
  correctable: {
    meaning: 'Correctable (non-halting) error bits are set in SEND_DMA_ENG_ERR_STATUS.',
    kernel: 'ENG_ERR_STATUS bits 19-23 (the COR bits); the Cornelis hfi1 and hfi2 do not log correctable-only errors.',
    confirm: "'hfi1-sdma show <engine>' decodes the bits.",
    action: 'Watch for them turning halting; report a persistent bit.',
    capture: SNAPSHOT,
  },
  full: {
    meaning:
      'The ring was full at each of the last samples while the engine kept retiring: senders wait for room most of the time. A saturated link looks exactly so; it is a finding only against a threshold you set.',
    kernel: 'descq_full_count (sdma_send_txreq, sdma_send_txlist) counts placements that found no room.',
    confirm: "'hfi1-sdma watch' (backpressure), the engine→VL map (sysfs sdma<N>/vl).",
    action: 'If one engine is hot while others idle, check the VL map and the traffic balance.',
    capture: 'Not needed.',
  },
  probableShort: {
    meaning: 'A sender probably stranded, for less than 30 s so far: it may yet be woken, or turn certain.',
    kernel: 'As for a probable strand (SD202).',
    confirm: "'hfi1-sdma waiters <engine>' again in a minute.",
    action: 'Nothing yet.',
    capture: 'Not needed.',
  },
  errQp: {
    meaning: 'A QP in the ERR state is still on a wait list: the driver leaves a busy QP queued until it is destroyed. Harmless.',
    kernel: 'notify_error_qp (qp.c) removes a QP from its list only when it is not busy.',
    confirm: "'hfi1-sdma waiters' (verdict error-state).",
    action: 'Nothing; it goes when the QP is destroyed.',
    capture: 'Not needed.',
  },
  reduced: {
    meaning: 'Some sources are not readable here (debugfs, the BAR): the view is reduced, and what needs them is not judged.',
    kernel: 'None: the reading side.',
    confirm: "'hfi1-sdma doctor'.",
    action: 'Run as root with debugfs mounted for the full view.',
    capture: 'Not needed.',
  },
  invisible: {
    meaning: 'A kind of waiter (qp, psm, ipoib) cannot be seen here, so none is said to wait: it is not covered, not absent.',
    kernel:
      "QPs come from debugfs qp_stats; PSM writers from /proc (root); IPoIB queues from the kernel log's timeout blocks (/dev/kmsg), and only once the netdev watchdog timed them out.",
    confirm: "'hfi1-sdma doctor' lists the waiter sources (qpStats, procPsm, trace).",
    action: 'Run as root for QPs and PSM writers.',
    capture: 'Not needed.',
  },
  fabricStall: {
    meaning:
      "Engines have work in flight and their heads do not move, while their port is ACTIVE, its XmitWait rises and it sends next to nothing: the far end of the link returns no credits, so the adapter's send buffer stays full and the engines stop fetching. The host is not at fault; its jobs wait on the fabric. The engines' verdict reason is no-credits.",
    kernel:
      "None on the host: the engines' HEAD freezes as it would for a chip that stops fetching (sdma_seqfile_dump_sde, sdma.c shows the same), and only the port counters tell the two apart: TxWait (XmitWait, chip.c port counters) counts the ticks the port had data and no credit, and TxWords/DcXmitFlits what it sent.",
    confirm:
      "'hfi1-sdma --json engines' twice (portCounters: xmitWait rising, xmitData flat); 'opainfo' on the host for the port; 'opareport -o errors' and the switch port's counters (congestion, a failed buffer, credits) at the other end.",
    action:
      'Look at the fabric, not the host: the switch port at the other end of the link, its neighbours and the cable. A switch port whose credits stop (a memory error, a hung port) is cleared there; the engines resume by themselves once credits return. A reload of the host driver does not help.',
    capture: `${SNAPSHOT}; 'opareport -o errors' and 'opareport -o slowlinks' from the fabric manager's node.`,
  },
  linkStall: {
    meaning:
      'Engines have work in flight and their heads do not move while a port they send on lost its link or retrains (LinkDowned or LinkErrorRecovery rose during the stall, or the port is no longer ACTIVE): packets for that port wait on the link. The verdict reason is link-lost.',
    kernel:
      "The link's state machine (handle_link_down, handle_link_up and the LNI of chip.c); LinkDowned is the driver's SwLinkDown, LinkErrorRecovery the link's retrain count (mad.c). On a one-port adapter a link loss freezes the engines (e85_LinkDown, sdma.c).",
    confirm:
      "'hfi1-sdma engines' (every port's link), 'hfi1-sdma log' of the kernel log (its link lines, counted per port), 'opainfo' (the port's physical state and link-down reason).",
    action: 'Check the cable, the transceiver and the switch port; the engines resume once the link trains and is ACTIVE.',
    capture: `${SNAPSHOT}; 'opainfo' and the switch port's log.`,
  },
  ipoibStuck: {
    meaning:
      'An accelerated-IPoIB transmit queue stayed stopped longer than the netdev watchdog allows (1 s): the kernel timed it out and the driver logged its state. Its traffic (IP over the fabric: storage, NFS, daemons) does not move. no_desc 1 says it waits for SDMA descriptors of the engine it names: a stalled or saturated engine, or a wake-up that was lost.',
    kernel:
      "dev_watchdog (sch_generic.c) calls the driver's hfi1_ipoib_tx_timeout (ipoib_tx.c, added with 'IB/{ipoib,hfi1}: Add a timeout handler for rdma_netdev'), which prints the block (timeout txq … no_desc …, sde … engine N, sent/completed/used, wait queued, tx_list empty); queues/tx-N/tx_timeout counts the timeouts. The queue sleeps on the engine's dmawait through hfi1_ipoib_sdma_sleep and is woken by sdma_desc_avail (sdma.c).",
    confirm:
      "'hfi1-sdma log' of 'dmesg' (the watchdog line and the block, decoded), 'cat /sys/class/net/<ib>/queues/tx-N/tx_timeout', 'hfi1-sdma show <engine>' for the engine the block names.",
    action:
      'Look at the engine: stalled (a host or fabric cause, see its finding), or idle with the queue on its wait list (a lost wake-up: traffic on the engine releases it). Bringing the interface down and up restarts the queue but destroys the evidence.',
    capture: `${SNAPSHOT}; 'ip -s link show <ib>' and the kernel log since the first timeout.`,
  },
  portLost: {
    meaning:
      "A port is not ACTIVE and its LinkDowned counter says it had a link since the driver loaded: it lost it (an unused port, never up, counts no loss). Traffic for that port does not move; on a two-port adapter the other port's may.",
    kernel:
      "The driver counts each loss of an up link in SwLinkDown (ppd->link_downed, chip.c), which the PortCounters' LinkDowned shows.",
    confirm: "'hfi1-sdma engines' (the port's state), 'hfi1-sdma log' (its link lines), 'opainfo'.",
    action: 'Check the cable and the switch port of that port.',
    capture: "'opainfo', the kernel log's link lines.",
  },
  linkFlap: {
    meaning:
      "A port's link went down and came back while watched (LinkDowned rose, the port is ACTIVE again): packets in flight on it were lost and the engines sending on it may have been reset. Flaps that repeat point at the cable, the transceiver or the switch port.",
    kernel:
      "SwLinkDown (ppd->link_downed, chip.c) counts each loss; the kernel log has '8051: Link down' and 'Link down reason: …' for it.",
    confirm: "'hfi1-sdma log' of dmesg (link lines per port), 'opainfo' (the link-down reason), 'opareport -o errors'.",
    action: 'Check the cable, the transceiver and the switch port; repeated flaps: replace the cable.',
    capture: "The kernel log's link lines and 'opainfo'.",
  },
  linkRetrain: {
    meaning:
      "A port's LinkErrorRecovery rose while watched: its link retrained, a sign of a marginal link (errors the link recovered from). Traffic pauses during each retrain.",
    kernel: 'LinkErrorRecovery is the sum of the device counters DcLinkSeqCrc and DcReinitPeer (mad.c).',
    confirm: "'opainfo' and 'opareport -o errors' (the link quality and the error counters of both ends).",
    action: 'Check the cable and the transceiver; a rising count on one link is a candidate for replacement.',
    capture: "'opareport -o errors' and 'opainfo'.",
  },
  bulkService: {
    meaning:
      "The Cornelis hfi1's bulk service is on (use_bulksvc=Y): it owns the last bulksvc_num_sdma engines and carries verbs messages over 2 KB and user verbs off SDMA. Idle SDMA engines under a verbs load are expected, and the bulk service's own engines are not judged as SDMA rings.",
    kernel:
      "hfi1_bulksvc_loan_resources (bulksvc.c) lends the engines (hw_resources shows them as 'bulksvc.sde a-b'); the rest stay SDMA's.",
    confirm: "'cat /sys/module/hfi1/parameters/use_bulksvc', 'cat /sys/class/infiniband/hfi1_N/hw_resources'.",
    action: 'Nothing: this explains idle engines. Judge the verbs path by the port counters, not the SDMA engines.',
    capture: 'Not needed.',
  },
  sdmaOff: {
    meaning: 'cap_mask lacks the SDMA bit: the driver sends nothing through its SDMA engines. Every engine idle is expected.',
    kernel: 'HFI1_CAP_SDMA (common.h) in the cap_mask module parameter (driver.c).',
    confirm: "'cat /sys/module/hfi1/parameters/cap_mask' (bit 1, 0x2).",
    action: 'Nothing, unless SDMA was meant to be on: then remove the override of cap_mask and reload the driver.',
    capture: 'Not needed.',
  },
  psmUnjudged: {
    meaning:
      "PSM writers are waiting for ring space while engines of their unit are busy, and nothing here says which engine each waits on. A writer whose wake-up was lost (SD203) sleeps on an idle engine; one that waits for room sleeps on a busy one. Without the writer's engine the two look alike, so a lost wake-up on a busy unit cannot be seen: this note says so instead of an all-clear.",
    kernel:
      'A writer sleeps in hfi1_user_sdma_process_request (user_sdma.c) on the engine sdma_select_user_engine (sdma.c) chose, which /proc does not show. The hfi1_usdma_defer trace event (trace_tx.h) names the engine of each deferral; SDMA_IOWAIT_TIMEOUT (1 s, user_sdma.h) ends the wait either way.',
    confirm:
      "Enable the hfi1_tx:hfi1_usdma_* trace events (as root: echo 1 > /sys/kernel/tracing/events/hfi1_tx/hfi1_usdma_defer/enable, likewise hfi1_usdma_activate and hfi1_usdma_we); 'hfi1-sdma waiters' then ties each writer to its engine and judges it there.",
    action:
      'Nothing while jobs run at their usual speed. If a PSM job slows down with 1 s stalls, enable the trace events above and run health again.',
    capture: `${SNAPSHOT}, with the trace events enabled.`,
  },
};

/** The explanation of a code (`SD201`), with its kind, or null when no finding has that code. */
export function explainCode(
  code: string,
): { kind: FindingKindName; title: string; severity: string; count: string | null; e: Explanation } | null {
  const upper = code.trim().toUpperCase();
  for (const [kind, k] of Object.entries(FINDING_KINDS) as [FindingKindName, (typeof FINDING_KINDS)[FindingKindName]][]) {
    if (k.code === upper) return { kind, title: k.title, severity: k.severity, count: k.count, e: EXPLANATIONS[kind] };
  }
  return null;
}
