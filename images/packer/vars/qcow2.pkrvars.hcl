# qcow2 for KVM, Proxmox, OpenStack, libvirt: sparse, so the virtual size
# costs nothing until used. (images/build.sh copies it to
# images/.build/out/fulcrum-<version>.qcow2.)
vm_name          = "fulcrum.qcow2"
disk_size        = "16G"
memory           = 2048
cpus             = 2
disk_compression = true
