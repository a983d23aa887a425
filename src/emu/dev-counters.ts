// The device counters of hfi1 in the order of dev_cntrs[] (chip.c), as init_cntrs names them in debugfs
// `counter_names` and the RDMA core's device `hw_counters/` shows them (hfi1_alloc_hw_device_stats, verbs.c): a 32-bit
// counter's name ends in `,32`; one marked per VL (CNTR_VL) is expanded to VL 0-7 and 15 (vl_from_idx), one marked
// per engine (CNTR_SDMA) to every engine of the chip (chip_sdma_engines). The CN5000 builds are taken to count the
// same (a choice: their tables are not in the public sources).
import { TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';

/** dev_cntrs[] in order: `,32` for a 32-bit counter, `*vl` per VL, `*sdma` per engine; `+` stands for a space in a name. */
const DEV_CNTRS: readonly string[] = `
RcvOverflow,32 RxLenErr,32 RxShrErr,32 RxICrcErr,32 RxEbpCnt,32 RxTIDFullEr,32 RxTIDInvalid,32 RxTidFLGMs,32
RxCtxEgrS,32 RxTidFLSMs,32 CcePciCrSt,32 CcePciTrSt,32 CcePioWrSt,32 CceErrInt,32 CceSdmaInt,32 CceMiscInt,32
CceRcvAvInt,32 CceRcvUrgInt,32 CceSndCrInt,32 DcUnctblErr DcRecvErr DcFmCfgErr DcRmtPhyErr DcDroppedPkt
DcMcXmitPkts DcMcRcvPkts DcXmitCorr DcRcvCorrCnt DcRxFCntl DcXmitFCntl DcXmitFlits DcRcvFlits DcXmitPkts DcRcvPkts
DcRxFlitVl*vl DcRxPktVl*vl DcRcvFcn DcRcvFcnVl*vl DcRcvBcn DcRcvBcnVl*vl DcRcvBbl DcRcvBblVl*vl DcMarkFcn
DcMarkFcnVl*vl DcTotCrc DcCrcLn0 DcCrcLn1 DcCrcLn2 DcCrcLn3 DcMultLn DcTxReplay DcRxReplay DcLinkSeqCrc DcEsc0
DcEsc1 DcEsc0Plus2 DcReinitPeer DcSbe DcMiscFlg DcGoodLTP DcAccLTP DcPrfRxFlit DcPrfTxFlit DcPrfClk DcFltCrdts
DcPauseComp DcStsTxSbe DcStsTxMbe Intr RcvLimit SeqDrop0 vTxWait PioWait PioDrain KmemWait TidWait SendSched
SDEDscFdCn,32*sdma SDMAInt,32*sdma SDMAErrCt,32*sdma SDMAIdInt,32*sdma SDMAPrIntCn,32*sdma MISC_PLL_LOCK_FAIL_ERR
MISC_MBIST_FAIL_ERR MISC_INVALID_EEP_CMD_ERR MISC_EFUSE_DONE_PARITY_ERR MISC_EFUSE_WRITE_ERR
MISC_EFUSE_READ_BAD_ADDR_ERR MISC_EFUSE_CSR_PARITY_ERR MISC_FW_AUTH_FAILED_ERR MISC_KEY_MISMATCH_ERR
MISC_SBUS_WRITE_FAILED_ERR MISC_CSR_WRITE_BAD_ADDR_ERR MISC_CSR_READ_BAD_ADDR_ERR MISC_CSR_PARITY_ERR
CceErrStatusAggregatedCnt CceMsixCsrParityErr CceIntMapUncErr CceIntMapCorErr CceMsixTableUncErr CceMsixTableCorErr
CceRxdmaConvFifoParityErr CceRcplAsyncFifoParityErr CceSegWriteBadAddrErr CceSegReadBadAddrErr Cce+LATriggered
CceTrgtCplTimeoutErr PcicReceiveParityErr PcicTransmitBackParityErr PcicTransmitFrontParityErr PcicCplDatQUncErr
PcicCplHdQUncErr PcicPostDatQUncErr PcicPostHdQUncErr PcicRetrySotMemUncErr PcicRetryMemUncErr
PcicNPostDatQParityErr PcicNPostHQParityErr PcicCplDatQCorErr PcicCplHdQCorErr PcicPostDatQCorErr PcicPostHdQCorErr
PcicRetrySotMemCorErr PcicRetryMemCorErr CceCli1AsyncFifoDbgParityError CceCli1AsyncFifoRxdmaParityError
CceCli1AsyncFifoSdmaHdParityErr CceCli1AsyncFifoPioCrdtParityErr CceCli2AsyncFifoParityErr CceCsrCfgBusParityErr
CceCli0AsyncFifoParityErr CceRspdDataParityErr CceTrgtAccessErr CceTrgtAsyncFifoParityErr CceCsrWriteBadAddrErr
CceCsrReadBadAddrErr CceCsrParityErr RxCsrParityErr RxCsrWriteBadAddrErr RxCsrReadBadAddrErr RxDmaCsrUncErr
RxDmaDqFsmEncodingErr RxDmaEqFsmEncodingErr RxDmaCsrParityErr RxRbufDataCorErr RxRbufDataUncErr
RxDmaDataFifoRdCorErr RxDmaDataFifoRdUncErr RxDmaHdrFifoRdCorErr RxDmaHdrFifoRdUncErr RxRbufDescPart2CorErr
RxRbufDescPart2UncErr RxRbufDescPart1CorErr RxRbufDescPart1UncErr RxHqIntrFsmErr RxHqIntrCsrParityErr
RxLookupCsrParityErr RxLookupRcvArrayCorErr RxLookupRcvArrayUncErr RxLookupDesPart2ParityErr
RxLookupDesPart1UncCorErr RxLookupDesPart1UncErr RxRbufNextFreeBufCorErr RxRbufNextFreeBufUncErr
RxRbufFlInitWrAddrParityErr RxRbufFlInitdoneParityErr RxRbufFlWrAddrParityErr RxRbufFlRdAddrParityErr
RxRbufEmptyErr RxRbufFullErr RxRBufBadLookupErr RxRbufCtxIdParityErr RxRbufCsrQEOPDWParityErr
RxRbufCsrQNumOfPktParityErr RxRbufCsrQTlPtrParityErr RxRbufCsrQHdPtrParityErr RxRbufCsrQVldBitParityErr
RxRbufCsrQNextBufParityErr RxRbufCsrQEntCntParityErr RxRbufCsrQHeadBufNumParityErr RxRbufBlockListReadCorErr
RxRbufBlockListReadUncErr RxRbufLookupDesCorErr RxRbufLookupDesUncErr RxRbufLookupDesRegUncCorErr
RxRbufLookupDesRegUncErr RxRbufFreeListCorErr RxRbufFreeListUncErr RxRcvFsmEncodingErr RxDmaFlagCorErr
RxDmaFlagUncErr RxDcSopEopParityErr RxRcvCsrParityErr RxRcvQpMapTableCorErr RxRcvQpMapTableUncErr RxRcvDataCorErr
RxRcvDataUncErr RxRcvHdrCorErr RxRcvHdrUncErr RxDcIntfParityErr RxDmaCsrCorErr PioPecSopHeadParityErr
PioPccSopHeadParityErr PioLastReturnedCntParityErr PioCurrentFreeCntParityErr Pio+Reserved+31 Pio+Reserved+30
PioPpmcSopLenErr PioPpmcBqcMemParityErr PioVlFifoParityErr PioVlfSopParityErr PioVlfVlLenParityErr
PioBlockQwCountParityErr PioWriteQwValidParityErr PioStateMachineErr PioWriteDataParityErr PioHostAddrMemCorErr
PioHostAddrMemUncErr PioPktEvictSmOrArbSmErr PioInitSmInErr PioPpmcPblFifoErr PioCreditRetFifoParityErr
PioVlLenMemBank1CorErr PioVlLenMemBank0CorErr PioVlLenMemBank1UncErr PioVlLenMemBank0UncErr PioSmPktResetParityErr
PioPktEvictFifoParityErr PioSbrdctrlCrrelFifoParityErr PioSbrdctlCrrelParityErr PioPecFifoParityErr
PioPccFifoParityErr PioSbMemFifo1Err PioSbMemFifo0Err PioCsrParityErr PioWriteAddrParityErr PioWriteBadCtxtErr
SDmaPcieReqTrackingCorErr SDmaPcieReqTrackingUncErr SDmaCsrParityErr SDmaRpyTagErr TxReadPioMemoryCsrUncErr
TxReadSdmaMemoryCsrUncErr TxEgressFifoCorErr TxReadPioMemoryCorErr TxReadSdmaMemoryCorErr TxSbHdrCorErr
TxCreditOverrunErr TxLaunchFifo8CorErr TxLaunchFifo7CorErr TxLaunchFifo6CorErr TxLaunchFifo5CorErr
TxLaunchFifo4CorErr TxLaunchFifo3CorErr TxLaunchFifo2CorErr TxLaunchFifo1CorErr TxLaunchFifo0CorErr
TxCreditReturnVLErr TxHcrcInsertionErr TxEgressFifoUncErr TxReadPioMemoryUncErr TxReadSdmaMemoryUncErr
TxSbHdrUncErr TxCreditReturnParityErr TxLaunchFifo8UncOrParityErr TxLaunchFifo7UncOrParityErr
TxLaunchFifo6UncOrParityErr TxLaunchFifo5UncOrParityErr TxLaunchFifo4UncOrParityErr TxLaunchFifo3UncOrParityErr
TxLaunchFifo2UncOrParityErr TxLaunchFifo1UncOrParityErr TxLaunchFifo0UncOrParityErr TxSdma15DisallowedPacketErr
TxSdma14DisallowedPacketErr TxSdma13DisallowedPacketErr TxSdma12DisallowedPacketErr TxSdma11DisallowedPacketErr
TxSdma10DisallowedPacketErr TxSdma9DisallowedPacketErr TxSdma8DisallowedPacketErr TxSdma7DisallowedPacketErr
TxSdma6DisallowedPacketErr TxSdma5DisallowedPacketErr TxSdma4DisallowedPacketErr TxSdma3DisallowedPacketErr
TxSdma2DisallowedPacketErr TxSdma1DisallowedPacketErr TxSdma0DisallowedPacketErr TxConfigParityErr
TxSbrdCtlCsrParityErr TxLaunchCsrParityErr TxIllegalVLErr TxSbrdCtlStateMachineParityErr Tx+Egress+Reserved+10
Tx+Egress+Reserved+9 TxSdmaLaunchIntfParityErr TxPioLaunchIntfParityErr Tx+Egress+Reserved+6
TxIncorrectLinkStateErr TxLinkdownErr EgressFifoUnderrunOrParityErr Tx+Egress+Reserved+2 TxPktIntegrityMemUncErr
TxPktIntegrityMemCorErr SendCsrWriteBadAddrErr SendCsrReadBadAddrErr SendCsrParityErr PioWriteOutOfBoundsErr
PioWriteOverflowErr PioWriteCrossesBoundaryErr PioDisallowedPacketErr PioInconsistentSopErr
SDmaHeaderRequestFifoCorErr SDmaHeaderStorageCorErr SDmaPacketTrackingCorErr SDmaAssemblyCorErr SDmaDescTableCorErr
SDmaHeaderRequestFifoUncErr SDmaHeaderStorageUncErr SDmaPacketTrackingUncErr SDmaAssemblyUncErr SDmaDescTableUncErr
SDmaTimeoutErr SDmaHeaderLengthErr SDmaHeaderAddressErr SDmaHeaderSelectErr SDma+Reserved+9
SDmaPacketDescOverflowErr SDmaLengthMismatchErr SDmaHaltErr SDmaMemReadErr SDmaFirstDescErr SDmaTailOutOfBoundsErr
SDmaTooLongErr SDmaGenMismatchErr SDmaWrongDwErr
`
  .trim()
  .split(/\s+/);

/** The VLs of a per-VL counter, in the driver's order (vl_from_idx: 0-7, then 15). */
const VLS = [0, 1, 2, 3, 4, 5, 6, 7, 15];

/** The names of counter_names, in order (460 on the chip's 16 engines). */
export const DEV_COUNTER_NAMES: readonly string[] = DEV_CNTRS.flatMap((entry) => {
  const [head = '', each] = entry.replaceAll('+', ' ').split('*');
  const comma = head.indexOf(',');
  const name = comma < 0 ? head : head.slice(0, comma);
  const suffix = comma < 0 ? '' : head.slice(comma);
  if (each === 'vl') return VLS.map((vl) => `${name}${vl}${suffix}`);
  if (each === 'sdma') return Array.from({ length: TXE_NUM_SDMA_ENGINES }, (_, e) => `${name}${e}${suffix}`);
  return [head];
});

/** The driver's own counters the RDMA core's device `hw_counters/` adds after them (driver_cntr_names, verbs.c). */
export const DRIVER_COUNTER_NAMES: readonly string[] = [
  'DRIVER_KernIntr',
  'DRIVER_ErrorIntr',
  'DRIVER_Tx_Errs',
  'DRIVER_Rcv_Errs',
  'DRIVER_HW_Errs',
  'DRIVER_NoPIOBufs',
  'DRIVER_CtxtsOpen',
  'DRIVER_RcvLen_Errs',
  'DRIVER_EgrBufFull',
  'DRIVER_EgrHdrFull',
];

/** `hw_counters/lifespan` (show_stats_lifespan, RDMA core sysfs.c): RDMA_HW_STATS_DEFAULT_LIFESPAN in ms, `%d\n`. */
export const HW_STATS_LIFESPAN_TEXT = '10\n';
