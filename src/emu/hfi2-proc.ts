// What /proc shows of a PSM writer blocked in hfi2's user SDMA request. Choices where the sources leave it open
// (say so where read): the v2 anonymous SDMA file shows as `anon_inode:hfi2-sdma` (the anon_inode_getfd naming),
// and the request function carries the hfi2_ prefix of the rename.

/** The fd link target of a writer's hfi2 SDMA file. */
export const HFI2_PSM_FD_TARGET = 'anon_inode:hfi2-sdma';

/** The kernel function a writer blocks in (hfi1_user_sdma_process_request renamed). */
export const HFI2_USER_SDMA_REQUEST_FN = 'hfi2_user_sdma_process_request';
