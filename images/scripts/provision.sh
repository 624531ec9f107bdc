#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Provisions the Fulcrum appliance's root filesystem. It is THE provisioning
# script of every image: it runs once, inside the chroot of a fresh Debian
# trixie made by mmdebstrap (images/build.sh copies this folder in), and the
# tree it leaves is both the live ISO's squashfs and, copied onto a disk by
# the guided installer (fulcrum-install), the installed system that Packer
# turns into the qcow2 and the OVA.
#
# Usage (as root, inside the chroot):
#   provision.sh install DIR   kernel, boot loaders, live-boot, SSH, the
#                              Fulcrum .debs in DIR/debs (their Depends come
#                              from the archive), the installer and its units
#                              (DIR/files is copied onto /), DKMS checked
#   provision.sh clean         image hygiene: no SSH host keys, no machine-id,
#                              no secrets, no package lists or caches, empty
#                              logs and /tmp, root password locked
# build.sh saves the downloaded packages between the two steps.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C.UTF-8
readonly HOSTNAME_DEFAULT=fulcrum

# The system itself. No Recommends: the Fulcrum packages' Depends pull in the
# appliance (PostgreSQL, nginx, HAProxy, keepalived, nftables, ...).
readonly SYSTEM_PACKAGES=(
	systemd-sysv systemd-timesyncd udev dbus kmod
	iproute2 iputils-ping procps less nano ca-certificates curl tcpdump
	openssh-server
)
# The kernel, the headers DKMS builds ip_vs_dllc against, and one initramfs
# for both ways of booting: live-boot's scripts act only with boot=live.
readonly BOOT_PACKAGES=(
	linux-image-amd64 linux-headers-amd64 dkms gcc make
	initramfs-tools zstd live-boot
	grub-pc-bin grub-efi-amd64-bin grub2-common
)
# What fulcrum-install runs: partitioning, file systems, the squashfs copy.
readonly INSTALLER_PACKAGES=(fdisk e2fsprogs dosfstools squashfs-tools util-linux)

log() { echo "provision: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

apt_install() {
	apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold "$@"
}

# The newest kernel installed in the image: what DKMS must build for (never the
# build host's `uname -r`, which is what a chroot reports).
image_kernel() {
	find /lib/modules -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort -V | tail -n 1
}

configure_base() {
	echo "$HOSTNAME_DEFAULT" >/etc/hostname
	printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
		"$HOSTNAME_DEFAULT" >/etc/hosts
	echo 'LANG=C.UTF-8' >/etc/default/locale
	# live-boot writes a loopback interfaces file there (in the live overlay).
	mkdir -p /etc/network
	: >/etc/fstab
}

install_fulcrum_debs() {
	local dir=$1
	local debs=("$dir"/debs/*.deb)
	if [[ ! -e ${debs[0]} ]]; then
		log "WARNING: no Fulcrum packages in $dir/debs: the image holds only the base system"
		return
	fi
	log "installing ${#debs[@]} Fulcrum packages: ${debs[*]##*/}"
	apt_install "${debs[@]}"
}

# ip_vs_dllc must be built by DKMS for the image's kernel. dkms's own hooks
# build for the newest kernel whose headers are present; this makes sure and
# fails the build if the module is missing.
check_dkms_module() {
	local kver=$1
	if ! dpkg-query -W -f '${Status}' ip-vs-dllc-dkms 2>/dev/null | grep -q 'ok installed'; then
		log "WARNING: ip-vs-dllc-dkms not installed: no ip_vs_dllc module in this image"
		return
	fi
	if ! modinfo -k "$kver" ip_vs_dllc >/dev/null 2>&1; then
		log "ip_vs_dllc not built for $kver yet: dkms autoinstall -k $kver"
		dkms autoinstall -k "$kver"
	fi
	modinfo -k "$kver" ip_vs_dllc >/dev/null 2>&1 || die "DKMS did not build ip_vs_dllc for kernel $kver"
	log "ip_vs_dllc built for $kver: $(modinfo -k "$kver" -F filename ip_vs_dllc)"
}

install_files() {
	local dir=$1
	cp -R --preserve=mode "$dir/files/." /
	install -m 0755 "$dir/fulcrum-install" /usr/sbin/fulcrum-install
}

# The live ISO's consoles: the installer on tty1 and ttyS0, or the unattended
# installation (the units' conditions pick, from the kernel command line).
enable_installer_units() {
	systemctl enable fulcrum-install-auto.service fulcrum-installer@tty1.service \
		fulcrum-installer@ttyS0.service
}

do_install() {
	local dir=${1:?usage: provision.sh install DIR}
	[[ -d $dir/files && -f $dir/fulcrum-install ]] || die "$dir has no files/ or fulcrum-install"
	configure_base
	# The installer's files first: they hold the initramfs and GRUB settings
	# the kernel's installation reads.
	install_files "$dir"
	apt_install "${SYSTEM_PACKAGES[@]}" "${INSTALLER_PACKAGES[@]}"
	apt_install "${BOOT_PACKAGES[@]}"
	install_fulcrum_debs "$dir"
	enable_installer_units
	local kver
	kver=$(image_kernel)
	[[ -n $kver ]] || die "no kernel in /lib/modules"
	check_dkms_module "$kver"
	[[ -s /boot/vmlinuz-$kver && -s /boot/initrd.img-$kver ]] || die "no kernel or initrd for $kver in /boot"
	# (grep reads it all: an early exit would break lsinitramfs's pipe)
	lsinitramfs "/boot/initrd.img-$kver" | grep 'scripts/live$' >/dev/null || die "the initrd lacks live-boot"
	log "kernel $kver, initrd $(du -h "/boot/initrd.img-$kver" | cut -f1)"
}

# Secrets a package may have made at installation: they must be made on each
# appliance instead (Fulcrum's first boot, or whoever needs them).
remove_secrets() {
	rm -f /etc/ssh/ssh_host_*
	# DKMS's module signing key: a fresh one is made on the appliance when it
	# next builds a module (a kernel upgrade).
	rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	rm -f /var/lib/systemd/credential.secret /var/lib/systemd/random-seed
	# ssl-cert's snakeoil pair (postgresql-common depends on it). PostgreSQL
	# is only reached over its Unix socket here: it runs without TLS.
	if [[ -e /etc/ssl/private/ssl-cert-snakeoil.key ]]; then
		rm -f /etc/ssl/private/ssl-cert-snakeoil.key /etc/ssl/certs/ssl-cert-snakeoil.pem
		local conf
		for conf in /etc/postgresql/*/*/postgresql.conf; do
			[[ -e $conf ]] || continue
			sed -i -E 's/^#?ssl[[:space:]]*=.*/ssl = off/; /^ssl_(cert|key)_file/d' "$conf"
		done
	fi
	local secret
	for secret in /etc/fulcrum/api.env /etc/fulcrum/agent/node.token /etc/fulcrum/tls/console.key; do
		if [[ -e $secret ]]; then
			log "WARNING: $secret was made at build time; removed (it belongs to first boot)"
			rm -f "$secret"
		fi
	done
}

reset_identity() {
	: >/etc/machine-id
	# The build host's resolvers (mmdebstrap copies them in); the first-boot
	# setup writes the appliance's own.
	if [[ ! -L /etc/resolv.conf ]]; then
		rm -f /etc/resolv.conf
		install -m 0644 /dev/null /etc/resolv.conf
	fi
	if [[ -d /var/lib/dbus ]]; then
		rm -f /var/lib/dbus/machine-id
		ln -s /etc/machine-id /var/lib/dbus/machine-id
	fi
	usermod --lock root
	rm -f /root/.bash_history /root/.lesshst /root/.wget-hsts
}

empty_caches_and_logs() {
	apt-get clean
	rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old \
		/var/lib/dpkg/*-old /var/cache/man/*
	find /var/log -type f \( -name '*.gz' -o -name '*.[0-9]' -o -name '*.old' \) -delete
	find /var/log -type f -exec truncate -s 0 {} +
	rm -rf /var/log/journal/* /tmp/* /tmp/.[!.]* /var/tmp/*
}

do_clean() {
	remove_secrets
	reset_identity
	empty_caches_and_logs
	local shadow
	shadow=$(getent shadow root | cut -d: -f2)
	[[ $shadow == '!'* || $shadow == '*' ]] || die "root's password is not locked"
	[[ ! -s /etc/machine-id ]] || die "/etc/machine-id is not empty"
	if compgen -G '/etc/ssh/ssh_host_*' >/dev/null; then die "SSH host keys are left"; fi
	log "clean: no host keys, empty machine-id, root locked, caches and logs emptied"
}

main() {
	local step=${1:-}
	shift || true
	case $step in
	install) do_install "$@" ;;
	clean) do_clean ;;
	*) die "usage: provision.sh install DIR | provision.sh clean" ;;
	esac
}

main "$@"
