# The Fulcrum appliance's disk image. Packer's QEMU builder (TCG: Packer would
# pick KVM whenever /dev/kvm opens, and the guest hangs under the build
# hosts' nested KVM) boots the live ISO's own kernel and initrd with
# `boot=live fulcrum.install=/dev/vda`: the ISO's unattended installer
# (fulcrum-install-auto.service) writes the virtio disk and powers off, and
# Packer keeps the disk. No SSH communicator, no VNC typing: the guest is
# done when it powers off. The provisioning happened once, in the ISO's root
# filesystem (images/scripts/provision.sh).
#
# Run by images/build.sh, once per target:
#   packer build -var-file=vars/qcow2.pkrvars.hcl -var iso_path=... fulcrum.pkr.hcl
# Per-target settings (disk size, memory, name) are in vars/<target>.pkrvars.hcl;
# build.sh passes the paths of the build (ISO, kernel, initrd, output folder).

variable "iso_path" {
  type        = string
  description = "The live ISO (images/.build/out/fulcrum-<version>.iso), attached as the CD the live system runs from."
}

variable "iso_checksum" {
  type        = string
  default     = "none"
  description = "The ISO is built locally, just before."
}

variable "kernel" {
  type        = string
  description = "The ISO's kernel (live/vmlinuz), booted directly: no boot menu to get past."
}

variable "initrd" {
  type        = string
  description = "The ISO's initrd (live/initrd.img)."
}

variable "output_directory" {
  type = string
}

variable "serial_log" {
  type        = string
  description = "The guest's serial console, where the installer says how it went."
}

variable "vm_name" {
  type        = string
  description = "File name of the disk image in output_directory."
}

variable "disk_size" {
  type        = string
  description = "Virtual size of the disk (the root partition fills it)."
}

variable "memory" {
  type        = number
  description = "Guest memory in MiB during the installation."
}

variable "cpus" {
  type    = number
  default = 2
}

variable "disk_compression" {
  type        = bool
  default     = false
  description = "Compress the qcow2 (worth it for a file to download, not for one converted further)."
}

variable "install_timeout" {
  type        = string
  default     = "40m"
  description = "How long the guest may take to install and power off."
}

source "qemu" "fulcrum" {
  iso_url          = var.iso_path
  iso_checksum     = var.iso_checksum
  accelerator      = "tcg"
  headless         = true
  communicator     = "none"
  shutdown_timeout = var.install_timeout
  output_directory = var.output_directory
  vm_name          = var.vm_name
  format           = "qcow2"
  disk_size        = var.disk_size
  disk_interface   = "virtio"
  disk_discard     = "unmap"
  disk_compression = var.disk_compression
  net_device       = "virtio-net"
  memory           = var.memory
  cpus             = var.cpus
  boot_wait        = "0s"
  qemuargs = [
    ["-kernel", var.kernel],
    ["-initrd", var.initrd],
    ["-append", "boot=live systemd.unit=fulcrum-live.target fulcrum.install=/dev/vda console=ttyS0,115200n8"],
    ["-serial", "file:${var.serial_log}"],
  ]
}

build {
  sources = ["source.qemu.fulcrum"]
}
