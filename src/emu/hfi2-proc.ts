// What /proc shows of a PSM writer blocked in hfi2's user SDMA request. Choices where the sources leave it open
// (say so where read): the v2 anonymous SDMA file shows as `anon_inode:hfi2-sdma` (the anon_inode_getfd naming),
// and the request function carries the hfi2_ prefix of the rename.

/** The fd link target of a writer's hfi2 SDMA file. */
export const HFI2_PSM_FD_TARGET = 'anon_inode:hfi2-sdma';

/** The kernel function a writer blocks in (hfi1_user_sdma_process_request renamed). */
export const HFI2_USER_SDMA_REQUEST_FN = 'hfi2_user_sdma_process_request';

/** /proc/<pid>/stack of a writer blocked in hfi2's user SDMA request (addresses hidden). */
export const HFI2_BLOCKED_STACK = [
  `[<0>] ${HFI2_USER_SDMA_REQUEST_FN}+0x5b1/0xb10 [hfi2]`,
  '[<0>] hfi2_sdma_write_iter+0xb6/0x170 [hfi2]',
  '[<0>] do_iter_readv_writev+0x13e/0x1c0',
  '[<0>] do_iter_write+0x80/0x190',
  '[<0>] vfs_writev+0x83/0x140',
  '[<0>] do_writev+0x6b/0x110',
  '[<0>] do_syscall_64+0x5b/0x80',
  '[<0>] entry_SYSCALL_64_after_hwframe+0x63/0xcd',
  '',
].join('\n');
