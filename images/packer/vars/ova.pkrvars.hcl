# The disk of the OVA (VMware ESXi/Workstation, VirtualBox): scripts/make-ova.sh
# turns it into a streamOptimized VMDK, whose capacity this is.
vm_name          = "fulcrum-ova.qcow2"
disk_size        = "16G"
memory           = 2048
cpus             = 2
