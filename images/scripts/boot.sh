#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boots a built Fulcrum image (qcow2, the OVA's VMDK, or the live ISO) under
# QEMU with TCG, as a user would run it, for trying it by hand and for the
# build's boot check: 2 vCPUs, virtio disk and NIC, user-mode networking with
# the guest's SSH, HTTP and HTTPS forwarded to host ports, the serial console
# on a file and/or a Unix socket (to drive the first-boot setup).
#
# Usage: images/scripts/boot.sh --image FILE | --iso FILE  [options] [-- QEMU ARGS]
#   --image FILE          the disk (format detected; opened read-only with --snapshot)
#   --iso FILE            boot the live ISO (with --image too: the disk is attached)
#   --snapshot            writes go to a throw-away overlay, the image stays as built
#   --uefi                OVMF instead of the BIOS
#   --disk-bus BUS        virtio (default) or sata (AHCI, as VMware and VirtualBox offer)
#   --memory MIB          default 3072; --cpus N: default 2
#   --serial-log FILE     everything the serial console prints
#   --serial-socket PATH  the serial console as a Unix socket server (connect to it
#                         with `socat -,raw,echo=0 UNIX-CONNECT:PATH`)
#   --ssh-port N, --http-port N, --https-port N
#                         127.0.0.1:N on the host forwards to the guest's 22, 80, 443
#   --wait-for REGEX      run in the background until REGEX shows on the serial
#                         console (needs --serial-log), then stop the guest; exit 0
#                         on a match, 1 if the guest stops or --timeout SECONDS
#                         (default 600) passes first
# Without --wait-for, QEMU runs in the foreground (Ctrl-A X quits with -nographic).
# Example: boot.sh --image images/.build/out/fulcrum-*.qcow2 --snapshot \
#            --serial-socket /tmp/fulcrum.sock --ssh-port 2222 --https-port 8443
set -euo pipefail

image="" iso="" snapshot=0 uefi=0 bus=virtio memory=3072 cpus=2
serial_log="" serial_socket="" wait_for="" timeout=600
declare -A forwards=()
extra=()
qemu_pid=""
work=""

log() { echo "boot.sh: $*" >&2; }
die() {
	log "error: $*"
	exit 2
}

usage() {
	sed -n '/^# Usage:/,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

port_arg() {
	if ! [[ $2 =~ ^[0-9]+$ ]] || (($2 < 1 || $2 > 65535)); then die "$1 needs a port number, not '$2'"; fi
	echo "$2"
}

parse_args() {
	while (($#)); do
		case $1 in
		--image) image=${2:?}; shift ;;
		--iso) iso=${2:?}; shift ;;
		--snapshot) snapshot=1 ;;
		--uefi) uefi=1 ;;
		--disk-bus) bus=${2:?}; shift ;;
		--memory) memory=${2:?}; shift ;;
		--cpus) cpus=${2:?}; shift ;;
		--serial-log) serial_log=${2:?}; shift ;;
		--serial-socket) serial_socket=${2:?}; shift ;;
		--ssh-port) forwards[22]=$(port_arg "$1" "${2:-}"); shift ;;
		--http-port) forwards[80]=$(port_arg "$1" "${2:-}"); shift ;;
		--https-port) forwards[443]=$(port_arg "$1" "${2:-}"); shift ;;
		--wait-for) wait_for=${2:?}; shift ;;
		--timeout) timeout=${2:?}; shift ;;
		--) shift; extra=("$@"); break ;;
		-h | --help) usage ;;
		*) log "unknown argument: $1"; usage ;;
		esac
		shift
	done
	[[ -n $image || -n $iso ]] || usage
	[[ -z $image || -f $image ]] || die "no image $image"
	[[ -z $iso || -f $iso ]] || die "no ISO $iso"
	[[ $bus =~ ^(virtio|sata)$ ]] || die "--disk-bus is virtio or sata"
	[[ $memory =~ ^[0-9]+$ && $cpus =~ ^[0-9]+$ && $timeout =~ ^[0-9]+$ ]] || die "--memory, --cpus, --timeout take numbers"
	[[ -z $wait_for || -n $serial_log ]] || die "--wait-for reads the --serial-log"
	# QEMU's option syntax uses commas: a path with one would change its meaning.
	local path
	for path in "$image" "$iso" "$serial_log" "$serial_socket"; do
		[[ $path != *,* ]] || die "paths with a comma are not supported: $path"
	done
}

# The serial console: a Unix socket and/or a file (a socket also logs to the file).
serial_args() {
	if [[ -n $serial_socket ]]; then
		local chardev="socket,id=serial0,path=$serial_socket,server=on,wait=off"
		[[ -z $serial_log ]] || chardev+=",logfile=$serial_log"
		args+=(-chardev "$chardev" -serial chardev:serial0)
	elif [[ -n $serial_log ]]; then
		args+=(-chardev "file,id=serial0,path=$serial_log" -serial chardev:serial0)
	else
		args+=(-serial mon:stdio)
	fi
}

disk_args() {
	[[ -n $image ]] || return 0
	local format drive
	format=$(qemu-img info --output=json "$image" | python3 -c 'import json,sys; print(json.load(sys.stdin)["format"])')
	drive="file=$image,format=$format,if=none,id=disk0,discard=unmap"
	((snapshot == 0)) || drive+=",snapshot=on"
	args+=(-drive "$drive")
	case $bus in
	virtio) args+=(-device "virtio-blk-pci,drive=disk0,bootindex=1") ;;
	sata) args+=(-device "ahci,id=ahci0" -device "ide-hd,drive=disk0,bus=ahci0.0,bootindex=1") ;;
	esac
}

firmware_args() {
	((uefi)) || return 0
	local code=/usr/share/OVMF/OVMF_CODE_4M.fd vars=/usr/share/OVMF/OVMF_VARS_4M.fd
	[[ -f $code ]] || die "no $code (apt-get install ovmf)"
	cp "$vars" "$work/OVMF_VARS.fd"
	args+=(-drive "if=pflash,format=raw,readonly=on,file=$code"
		-drive "if=pflash,format=raw,file=$work/OVMF_VARS.fd")
}

qemu_args() {
	local netdev=user,id=net0 port
	args=(qemu-system-x86_64 -accel tcg -cpu max -smp "$cpus" -m "$memory"
		-machine q35 -display none -no-reboot)
	firmware_args
	disk_args
	if [[ -n $iso ]]; then
		args+=(-drive "file=$iso,media=cdrom,readonly=on,if=none,id=cd0" -device "ide-cd,drive=cd0,bootindex=0")
	fi
	for port in "${!forwards[@]}"; do netdev+=",hostfwd=tcp:127.0.0.1:${forwards[$port]}-:$port"; done
	args+=(-netdev "$netdev" -device "virtio-net-pci,netdev=net0")
	serial_args
	args+=("${extra[@]}")
}

stop_qemu() {
	if [[ -n $qemu_pid ]] && kill -0 "$qemu_pid" 2>/dev/null; then
		kill "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	[[ -z $work ]] || rm -rf "$work"
}

# Runs QEMU in the background until the pattern shows on the serial console.
wait_for_pattern() {
	local start=$SECONDS
	: >"$serial_log"
	"${args[@]}" >"$work/qemu.log" 2>&1 </dev/null &
	qemu_pid=$!
	while ((SECONDS - start < timeout)); do
		if grep -aqE "$wait_for" "$serial_log"; then
			log "'$wait_for' on the serial console after $((SECONDS - start)) s"
			return 0
		fi
		if ! kill -0 "$qemu_pid" 2>/dev/null; then
			log "the guest stopped after $((SECONDS - start)) s without '$wait_for'"
			cat "$work/qemu.log" >&2
			return 1
		fi
		sleep 2
	done
	log "no '$wait_for' on the serial console after $timeout s"
	return 1
}

main() {
	parse_args "$@"
	work=$(mktemp -d /tmp/fulcrum-boot.XXXXXX)
	trap stop_qemu EXIT
	local args=()
	qemu_args
	log "${args[*]}"
	if [[ -n $wait_for ]]; then
		wait_for_pattern
	else
		"${args[@]}"
	fi
}

main "$@"
