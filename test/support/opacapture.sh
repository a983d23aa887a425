#!/bin/bash
# Make an opacapture tarball of a sysroot (an emulated host) the way opa-ff's opacapture.sh makes one of a live
# host: the files go under tmp/capture<PID>/ (cp -p -r, so links stay links), the host's name and kernel as
# `uname -a` prints them in os_version, the PCI functions as `lspci -vvv -xxxx` prints them, capture_info, dmesg,
# and files the reader must pass over (ps, rpms, a stack per process, etc/hosts); then `tar --format=gnu -czf`
# with the capture directory first.
# Usage: opacapture.sh SYSROOT OUT.tgz HOSTNAME
set -euo pipefail
root=$1 out=$2 host=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=tmp/capture$$
mkdir -p "$work/$dir" "$work/etc"
echo "Capture Info: Detail: 1; Date: Mon Nov  3 10:22:01 UTC 2025" > "$work/$dir/capture_info"
echo "Linux $host $(cat "$root/proc/sys/kernel/osrelease") #1 SMP PREEMPT_DYNAMIC Wed Apr 24 18:32:11 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux" > "$work/$dir/os_version"
echo "hfi1-sdma-1.0-1.x86_64" > "$work/$dir/rpms"
printf 'F S UID PID PPID C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD\n4 S root 1 0 0 80 0 - 42000 ep_pol Nov03 ? 00:00:05 /sbin/init\n' > "$work/$dir/ps"
cp "$root/dev/kmsg" "$work/$dir/dmesg"
{
  for d in "$root"/sys/bus/pci/devices/*; do
    bdf=$(basename "$d")
    vendor=$(cat "$d/vendor") device=$(cat "$d/device")
    echo "${bdf#0000:} Fabric controller: Omni-Path HFI (rev 11)"
    echo "	Subsystem: Omni-Path HFI Adapter"
    echo "	Kernel driver in use: hfi1"
    printf '00: %s %s %s %s 06 05 10 00 11 00 08 0c 10 00 00 00\n' "${vendor:4:2}" "${vendor:2:2}" "${device:4:2}" "${device:2:2}"
    echo "10: 0c 00 00 00 f0 39 00 00 00 00 00 00 00 00 00 00"
    echo
  done
} > "$work/$dir/lspci"
mkdir -p "$work/$dir/proc/1" "$work/$dir/sys/class" "$work/$dir/sys/kernel/debug/hfi1" "$work/$dir/sys/module/hfi1"
cp -p "$root/proc/interrupts" "$work/$dir/proc/" 2>/dev/null || true
cp -p "$root/proc/cmdline" "$work/$dir/proc/"
echo "[<0>] ep_poll+0x2a0/0x2d0" > "$work/$dir/proc/1/stack"
cp -p -r "$root"/sys/class/infiniband* "$work/$dir/sys/class/"
cp -p -r "$root"/sys/kernel/debug/hfi1/hfi1_* "$work/$dir/sys/kernel/debug/hfi1/"
cp -p -r "$root"/sys/module/hfi1/* "$work/$dir/sys/module/hfi1/"
mkdir -p "$work/$dir/sys/module/hfi1/holders"
ln -s ../../rdmavt "$work/$dir/sys/module/hfi1/holders/rdmavt"
echo "127.0.0.1 localhost $host" > "$work/etc/hosts"
(cd "$work" && tar --format=gnu -czf "$out" "$dir" etc/hosts)
