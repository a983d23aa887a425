// Names and numbers of the kernel that the live reader and the emulator both need to agree on, each said once:
// the function a blocked PSM writer sleeps in, writev's system call number, the hfi2 SDMA file's anon-inode name,
// and the QP type names of qp_stats. Where the sources leave a name open, the choice is said here.

/** The architectures whose system call tables are known here. */
export type ProcArch = 'x86_64' | 'aarch64';

/** writev's number by architecture (arch/x86/entry/syscalls/syscall_64.tbl; the generic table of arm64). */
export const WRITEV_NR: Readonly<Record<ProcArch, number>> = { x86_64: 20, aarch64: 66 };

/** The function a blocked hfi1 writer sleeps in (wait_event_interruptible_timeout on pq->busy.wait_dma, user_sdma.c). */
export const USER_SDMA_REQUEST_FN = 'hfi1_user_sdma_process_request';

/**
 * The kernel function a blocked writer sleeps in, by module. hfi2 renames the exported hfi1 symbols with its own
 * prefix; `hfi2_user_sdma_process_request` is that rename applied (a choice: its user_sdma.c is not public).
 */
export function userSdmaRequestFn(module: 'hfi1' | 'hfi2'): string {
  return module === 'hfi2' ? 'hfi2_user_sdma_process_request' : USER_SDMA_REQUEST_FN;
}

/**
 * The fd link target of the anonymous SDMA file an hfi2 writer of the June 2026 posting gets from an ioctl:
 * `anon_inode:hfi2-sdma` (the name anon_inode_getfd gives by convention; a choice, the posting's name is not public).
 */
export const HFI2_SDMA_ANON_INODE = 'anon_inode:hfi2-sdma';

/** QP types as qp_type_str (hfi1 qp.c) prints them. */
export type QpType = 'SMI' | 'GSI' | 'RC' | 'UC' | 'UD';
