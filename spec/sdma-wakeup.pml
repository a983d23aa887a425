/*
 * The sleep/wake-up protocol of an hfi1 / hfi2 SDMA engine, for SPIN.
 *
 * Senders that find the ring short of room go through sdma_check_progress (sdma.c) and their sleep
 * callback: a verbs QP (iowait_sleep, qp.c), a PSM packet queue (defer_packet_queue, user_sdma.c) or an
 * accelerated-IPoIB transmit queue (hfi1_ipoib_sdma_sleep, ipoib_tx.c). The engine's interrupt
 * (sdma_engine_interrupt, sdma_make_progress) retires what the chip completed and wakes the waiters whose
 * need fits (sdma_desc_avail). A sender left asleep on dmawait while the chip is idle and no interrupt is
 * pending is never woken: that lost wake-up is SPIN's "invalid end state" (every process blocked, a
 * sender not at its end), found by a safety run with no claim:
 *
 *     spin -a -DVARIANT=KERNEL -DNQP=1 -DNPSM=1 sdma-wakeup.pml
 *     gcc -O2 -DSAFETY -DNOREDUCE -o pan pan.c && ./pan -m100000
 *     spin -t -T -DVARIANT=KERNEL -DNQP=1 -DNPSM=1 sdma-wakeup.pml   # the counterexample, as @@ lines
 *
 * Variants (-DVARIANT=…), the order of the shortage path after a request did not fit:
 *   KERNEL            free count, sample head_lock, take waitlock, sdma_progress, enqueue, release
 *                     (today's kernel; a PSM queue's callback as since the 2019 fix)
 *   PSM_PRE_2019      a PSM queue calls sdma_progress before taking waitlock, retrying at most once
 *                     (defer_packet_queue before "Close PSM sdma_progress sleep window"); others as KERNEL
 *   SAMPLE_FIRST      head_lock sampled before the free count is recomputed, then as KERNEL
 *   NO_PROGRESS_CHECK take waitlock, enqueue, release: no sdma_progress at all
 * Senders: -DNQP, -DNPSM, -DNIPOIB (default two PSM queues), in that actor order (S1 … SN).
 *
 * The scenario is the race explorer's (`hfi1-sdma emu race`): a ring of 64 descriptors with packets of
 * 8, 16 and 32 in flight (free count 7) and each sender holding one request of 9. Every step below is
 * one atomic step of the explorer, so a counterexample here replays there step for step.
 *
 * Abstractions: the ring is counters (descriptors placed, completed by the chip, retired by software);
 * head_lock is its sequence number (odd while the interrupt holds it); tail_lock and waitlock are
 * holder variables; dmawait is a list with the head at index 0 (iowait_queue puts a sender that sent
 * nothing at the head). Steps are sequentially consistent: the memory model is not in this model.
 */

#ifndef VARIANT
#define VARIANT KERNEL
#endif
#define KERNEL 0
#define PSM_PRE_2019 1
#define SAMPLE_FIRST 2
#define NO_PROGRESS_CHECK 3

#ifndef NQP
#define NQP 0
#endif
#ifndef NPSM
#define NPSM 2
#endif
#ifndef NIPOIB
#define NIPOIB 0
#endif
/* Room for this many senders; the run has nsend of them (the variant and the senders can also be chosen
 * when pan runs, without compiling again: SDMA_SPEC_VARIANT=0..3 and SDMA_SPEC_KINDS, a digit per sender,
 * 0 QP 1 PSM 2 IPoIB, e.g. SDMA_SPEC_KINDS=01 for S1 a QP and S2 a PSM queue). */
#define MAXN 4

#define DESCQ_CNT 64
#define NEED 9
#define MAX_DEFER_RETRY_COUNT 1
#define NONE 255

/* Sender kinds: a QP parks its txreq on its work list before it sleeps (harvest need NEED); a PSM queue
 * parks nothing, an IPoIB queue parks on its own list (harvest need 0). */
#define QP 0
#define PSM 1
#define IPOIB 2

/* Interrupt sources the chip raises. */
#define INT_PROGRESS 1
#define INT_IDLE 2

byte variant = VARIANT;
byte nsend = 0;
byte kinds[MAXN];
/* Each sender's program counter and the interrupt handler's (globals: the watcher below reads them). */
byte spc[MAXN];
byte ipc = 0;
/* Watch for the window (-DWINDOW, or SDMA_SPEC_CHECK=window when pan runs). */
#ifdef WINDOW
bool watch = 1;
#else
bool watch = 0;
#endif

/* The ring as counters: descriptors placed (descq_tail), completed by the chip (HEAD), retired by
 * software (descq_head), from the first packet in flight. */
byte tail = 56;
byte hw = 0;
byte head = 0;
/* desc_avail, the submitters' cached free count (stale-low between refreshes). */
byte desc_avail = 7;
/* Packets placed, and the next one the chip completes: 8, 16 and 32 descriptors, then one request per sender. */
byte npk = 3;
byte chipk = 0;
#define PACKET(i) ((i) == 0 -> 8 : ((i) == 1 -> 16 : ((i) == 2 -> 32 : NEED)))
/* head_lock's sequence; interrupt sources raised and not yet taken. */
byte head_seq = 0;
byte pending = 0;
/* tail_lock and waitlock: the sender holding each, or NONE (the interrupt takes waitlock within a step). */
byte tail_holder = NONE;
byte wait_holder = NONE;
/* dmawait, head first; each sender's txreq parked on its work list; woken by sdma_desc_avail. */
byte dmawait[MAXN];
byte nwait = 0;
bool parked[MAXN];
bool woken[MAXN];
bool queued[MAXN];
/* Harvested by sdma_desc_avail and not yet woken (a bit per sender). */
byte harvest = 0;

#define FREECNT (DESCQ_CNT - 1 - (tail - head))
#define SAMPLES_FIRST (variant == SAMPLE_FIRST)
/* The sleep callback calls sdma_progress under waitlock: all but the pre-2019 PSM queue. */
#define LOCKED_PROGRESS(k) ((k) != PSM || variant != PSM_PRE_2019)

/* One line per step of a replayed trail: "@@ actor step seq head tail free", the actor numbered as the
 * explorer numbers it (senders 0…N-1, the chip N, the interrupt N+1) and the step by the codes below. */
#define STEP(actor, code) printf("@@ %d %d %d %d %d %d\n", actor, code, head_seq, head, tail, FREECNT)
#define CHIP nsend
#define IRQ (nsend + 1)

/* Step codes (what the step did), as `hfi1-sdma` tells them. */
#define S_FITS 1
#define S_NODESC 2
#define S_CHECK_FITS 3
#define S_CHECK_SHORT 4
#define S_SAMPLE 5
#define S_PARK_LOCK 6
#define S_LOCK 7
#define S_PROGRESS_1 8
#define S_PROGRESS_0 9
#define S_UNLOCKED_1 10
#define S_UNLOCKED_0 11
#define S_ENQUEUE 12
#define S_SLEEP 13
#define C_PROGRESS 20
#define C_IDLE 21
#define I_ENTRY 30
#define I_NOTHING 31
#define I_RETIRE 32
#define I_NO_ONE 33
#define I_HARVEST 34
#define I_WAKE_ALL 35
#define I_RELEASE 36

/* Program counters of a sender (the explorer's Pc). */
#define P_START 0
#define P_RETRY 1
#define P_CHECK 2
#define P_SAMPLE 3
#define P_LOCK 4
#define P_PROGRESS 5
#define P_ENQUEUE 6
#define P_UNLOCK 7
#define P_ASLEEP 8
#define P_PROGRESS_UNLOCKED 9
#define P_DONE 10

/* sdma_send_txreq's placement under tail_lock: submit_tx, SEND_DMA_TAIL, release. */
inline submit() {
  desc_avail = desc_avail - NEED;
  npk++;
  tail = tail + NEED;
  tail_holder = NONE;
  seq = 0;
  spc[id] = P_DONE
}

proctype Sender(byte id; byte kind) {
  byte seq = 0;
  byte busy = 0;
  byte k;
  do
  :: d_step { (spc[id] == P_START || spc[id] == P_RETRY || spc[id] == P_ASLEEP) && (spc[id] == P_RETRY || tail_holder == NONE) && (spc[id] != P_ASLEEP || woken[id]) ->
       /* sdma_send_txreq: take tail_lock (already held on a retry), num_desc against desc_avail. */
       if
       :: spc[id] == P_ASLEEP -> woken[id] = 0; parked[id] = 0
       :: else -> skip
       fi;
       tail_holder = id;
       if
       :: NEED <= desc_avail -> STEP(id, S_FITS); submit()
       :: else ->
          STEP(id, S_NODESC);
          if
          :: SAMPLES_FIRST -> spc[id] = P_SAMPLE
          :: else -> spc[id] = P_CHECK
          fi
       fi }
  :: d_step { spc[id] == P_CHECK ->
       /* sdma_check_progress: desc_avail := freecnt; -EAGAIN when it fits now. */
       desc_avail = FREECNT;
       if
       :: NEED <= desc_avail -> STEP(id, S_CHECK_FITS); spc[id] = P_RETRY
       :: else ->
          STEP(id, S_CHECK_SHORT);
          if
          :: SAMPLES_FIRST -> spc[id] = P_LOCK
          :: else -> spc[id] = P_SAMPLE
          fi
       fi }
  :: d_step { spc[id] == P_SAMPLE ->
       /* raw_seqcount_begin: the sequence with bit 0 cleared. */
       seq = head_seq - (head_seq % 2);
       STEP(id, S_SAMPLE);
       if
       :: SAMPLES_FIRST -> spc[id] = P_CHECK
       :: !SAMPLES_FIRST && LOCKED_PROGRESS(kind) -> spc[id] = P_LOCK
       :: else -> spc[id] = P_PROGRESS_UNLOCKED
       fi }
  :: d_step { spc[id] == P_LOCK && wait_holder == NONE ->
       /* iowait_sleep parks the QP's txreq on its work list first; then waitlock (write). */
       if
       :: kind == QP && !parked[id] -> parked[id] = 1; STEP(id, S_PARK_LOCK)
       :: else -> STEP(id, S_LOCK)
       fi;
       wait_holder = id;
       if
       :: LOCKED_PROGRESS(kind) && variant != NO_PROGRESS_CHECK -> spc[id] = P_PROGRESS
       :: else -> spc[id] = P_ENQUEUE
       fi }
  :: d_step { spc[id] == P_PROGRESS || spc[id] == P_PROGRESS_UNLOCKED ->
       /* sdma_progress: 1 when head_lock moved since the sample and the request fits the free count. */
       if
       :: head_seq != seq -> desc_avail = FREECNT
       :: else -> skip
       fi;
       if
       :: head_seq != seq && NEED <= FREECNT && spc[id] == P_PROGRESS ->
          wait_holder = NONE; parked[id] = 0; desc_avail = FREECNT;
          STEP(id, S_PROGRESS_1); spc[id] = P_RETRY
       :: head_seq != seq && NEED <= FREECNT && spc[id] == P_PROGRESS_UNLOCKED && busy < MAX_DEFER_RETRY_COUNT ->
          busy++; desc_avail = FREECNT;
          STEP(id, S_UNLOCKED_1); spc[id] = P_RETRY
       :: else ->
          if
          :: spc[id] == P_PROGRESS -> STEP(id, S_PROGRESS_0); spc[id] = P_ENQUEUE
          :: else -> STEP(id, S_UNLOCKED_0); spc[id] = P_LOCK
          fi
       fi }
  :: d_step { spc[id] == P_ENQUEUE ->
       /* iowait_queue: a sender that sent nothing goes to the head of dmawait. */
       if
       :: !queued[id] ->
          k = nwait;
          do
          :: k > 0 -> dmawait[k] = dmawait[k - 1]; k--
          :: else -> break
          od;
          dmawait[0] = id; nwait++; queued[id] = 1
       :: else -> skip
       fi;
       STEP(id, S_ENQUEUE);
       spc[id] = P_UNLOCK }
  :: d_step { spc[id] == P_UNLOCK ->
       /* Release waitlock; -EBUSY (descq_full_count + 1); release tail_lock; sleep. */
       wait_holder = NONE; tail_holder = NONE; seq = 0;
       STEP(id, S_SLEEP);
       spc[id] = P_ASLEEP }
  :: spc[id] == P_DONE -> break
  od
}

/* The chip completes the packet at HEAD and raises an interrupt: idle when that drained the ring. */
proctype Chip() {
end:
  do
  :: d_step { chipk < npk ->
       hw = hw + PACKET(chipk); chipk++;
       if
       :: hw == tail -> pending = pending | INT_IDLE; STEP(CHIP, C_IDLE)
       :: else -> pending = pending | INT_PROGRESS; STEP(CHIP, C_PROGRESS)
       fi }
  od
}

/* Program counters of the interrupt handler (the explorer's IrqPc). */
#define I_IDLE 0
#define I_ADVANCE 1
#define I_AVAIL 2
#define I_WAKE 3
#define I_EXIT 4

/* sdma_engine_interrupt, sdma_make_progress and sdma_desc_avail, one step at a time. */
proctype Irq() {
  byte avail = 0;
  byte i = 0;
  byte n = 0;
  byte need = 0;
end:
  do
  :: d_step { ipc == I_IDLE && pending != 0 ->
       pending = 0; head_seq++;
       STEP(IRQ, I_ENTRY);
       ipc = I_ADVANCE }
  :: d_step { ipc == I_ADVANCE ->
       if
       :: head == hw -> STEP(IRQ, I_NOTHING); ipc = I_EXIT
       :: else -> head = hw; avail = FREECNT; STEP(IRQ, I_RETIRE); ipc = I_AVAIL
       fi }
  :: d_step { ipc == I_AVAIL && wait_holder == NONE ->
       /* Harvest from the head of dmawait; stop at the first waiter whose need exceeds what is left. */
       i = 0; n = 0;
       do
       :: i < nwait ->
          if
          :: parked[dmawait[i]] -> need = NEED
          :: else -> need = 0
          fi;
          if
          :: need > avail -> break
          :: else -> avail = avail - need; harvest = harvest | (1 << dmawait[i]); queued[dmawait[i]] = 0; i++; n++
          fi
       :: else -> break
       od;
       /* Drop the harvested prefix (the freed slots cleared: a stale one would make two states of one). */
       i = 0;
       do
       :: i + n < nwait -> dmawait[i] = dmawait[i + n]; i++
       :: else -> break
       od;
       do
       :: i < nwait -> dmawait[i] = 0; i++
       :: else -> break
       od;
       nwait = nwait - n;
       if
       :: n == 0 -> STEP(IRQ, I_NO_ONE); ipc = I_EXIT
       :: else -> STEP(IRQ, I_HARVEST); ipc = I_WAKE
       fi;
       i = 0; n = 0; need = 0 }
  :: d_step { ipc == I_WAKE ->
       i = 0;
       do
       :: i < nsend -> if :: harvest & (1 << i) -> woken[i] = 1 :: else -> skip fi; i++
       :: else -> break
       od;
       harvest = 0; i = 0;
       STEP(IRQ, I_WAKE_ALL);
       ipc = I_EXIT }
  :: d_step { ipc == I_EXIT ->
       head_seq++; avail = 0;
       STEP(IRQ, I_RELEASE);
       ipc = I_IDLE }
  od
}

/* A sender asleep on dmawait with room for it while the chip is idle, no interrupt is pending and the handler is
 * not running: nothing will wake it unless another sender's traffic does (the explorer's lost wake-up). */
#define LEFT(s) (nsend > s && spc[s] == P_ASLEEP && !woken[s] && queued[s] && NEED <= FREECNT)
#define LOST (chipk == npk && pending == 0 && ipc == I_IDLE && (LEFT(0) || LEFT(1) || LEFT(2) || LEFT(3)))

proctype Watch() {
end:
  (LOST) -> assert(false)
}

init {
  byte s = 0;
  atomic {
    do
    :: s < NQP -> kinds[s] = QP; s++
    :: s >= NQP && s < NQP + NPSM -> kinds[s] = PSM; s++
    :: s >= NQP + NPSM && s < NQP + NPSM + NIPOIB -> kinds[s] = IPOIB; s++
    :: else -> break
    od;
    nsend = s;
    /* pan only (a simulation keeps the -D choices): the environment's variant and senders. */
    c_code {
      char *v = getenv("SDMA_SPEC_VARIANT"), *k = getenv("SDMA_SPEC_KINDS"), *c = getenv("SDMA_SPEC_CHECK");
      if (c != NULL) now.watch = strcmp(c, "window") == 0;
      if (v != NULL && v[0] >= '0' && v[0] <= '3' && v[1] == '\0') now.variant = v[0] - '0';
      if (k != NULL && k[0] != '\0') {
        int j;
        for (j = 0; j < MAXN && k[j] >= '0' && k[j] <= '2'; j++) now.kinds[j] = k[j] - '0';
        if (k[j] == '\0') now.nsend = j; else { fprintf(stderr, "SDMA_SPEC_KINDS: at most 4 digits 0-2\n"); exit(64); }
      }
    };
    s = 0;
    do
    :: s < nsend -> run Sender(s, kinds[s]); s++
    :: else -> break
    od;
    run Chip();
    run Irq();
    if
    :: watch -> run Watch()
    :: else -> skip
    fi
  }
}
