#!/bin/bash
# The part of LBNL Node Health Check (NHC) that a check relies on, for a host without NHC (Debian does not package
# it), as NHC 1.4 documents and does it; enough to run deploy/nhc/hfi1_sdma.nhc as Slurm's HealthCheckProgram:
#   - PATH is /sbin:/usr/sbin:/bin:/usr/bin, whatever the caller's;
#   - the node is named as the kernel names it (/proc/sys/kernel/hostname);
#   - every *.nhc file of the script directory is sourced, then each line `MASK || CHECK` of nhc.conf whose mask
#     matches the node runs CHECK (a line without || is skipped; `export VAR=...` lines set a variable);
#   - a check fails through `die RC MESSAGE`: the log says "Health check failed:  MESSAGE", the node is marked
#     offline by the resource manager's helper (Slurm: `scontrol update State=DRAIN NodeName=N Reason="NHC: MESSAGE"`,
#     the message passed through eval inside single quotes, as NHC 1.4 passes it), and NHC exits with RC;
#   - when every check passed, a node whose reason NHC set ("NHC: …") is put back online.
# Environment: NHC_DIR (holding scripts/ and nhc.conf; nhc.log is written there), SLURM_CONF.
PATH=/sbin:/usr/sbin:/bin:/usr/bin
export PATH
read -r HOSTNAME < /proc/sys/kernel/hostname
LOG="$NHC_DIR/nhc.log"

log() { printf '%s\n' "$*" >> "$LOG"; }

node_mark_offline() {
    scontrol update State=DRAIN NodeName="$1" Reason="NHC: $2"
}

node_mark_online() {
    local reason
    reason=$(sinfo -h -n "$1" -o '%E')
    [[ "$reason" == NHC:* ]] && scontrol update State=RESUME NodeName="$1"
}

die() {
    local rc=$1
    shift
    log "ERROR:  nhc:  Health check failed:  $*"
    eval node_mark_offline "'$HOSTNAME'" "'$*'"
    log "ran: failed"
    exit "$rc"
}

for f in "$NHC_DIR"/scripts/*.nhc; do
    . "$f"
done
while IFS= read -r line; do
    [[ "$line" =~ ^[[:space:]]*# || "$line" != *"||"* ]] && continue
    mask="${line%%||*}"
    mask="${mask//[[:space:]]/}"
    check="${line#*||}"
    # shellcheck disable=SC2053
    [[ "$HOSTNAME" == $mask ]] || continue
    eval "$check"
done < "$NHC_DIR/nhc.conf"
node_mark_online "$HOSTNAME"
log "ran: passed"
exit 0
