#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Packs a Fulcrum disk image into an OVA for VMware (ESXi, Workstation,
# Fusion) and VirtualBox: the disk as a streamOptimized VMDK, an OVF 1.0
# descriptor (one virtual system: 2 vCPUs, 4 GiB, an LSI Logic SCSI disk, an
# E1000 NIC on "VM Network", product and version), and a SHA-256 manifest, in
# a POSIX tar in the order OVF requires: descriptor, manifest, then the files
# in the order of its References. Checks its own output: the descriptor is
# well-formed XML (xmllint) and the VMDK inside the OVA reads back, with
# qemu-img, as the same disk as the source.
#
# Usage: images/scripts/make-ova.sh DISK OVA VERSION
#   DISK     the installed disk (any format qemu-img reads; Packer's qcow2)
#   OVA      the file to write (e.g. images/.build/out/fulcrum-1.0.ova)
#   VERSION  the appliance version for the OVF's ProductSection
set -euo pipefail

readonly CPUS=2
readonly MEMORY_MIB=4096
readonly NETWORK="VM Network"
readonly NAME=fulcrum

log() { echo "make-ova: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

qemu_img_field() {
	qemu-img info --output=json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

# Bytes of the disk that hold data (what the VMDK unpacks to, populatedSize).
allocated_bytes() {
	qemu-img map --output=json "$1" |
		python3 -c 'import json,sys; print(sum(e["length"] for e in json.load(sys.stdin) if e["data"]))'
}

# write_ovf FILE VMDK VMDK_BYTES CAPACITY POPULATED VERSION
write_ovf() {
	local ovf=$1 vmdk=$2 vmdk_bytes=$3 capacity=$4 populated=$5 version=$6
	cat >"$ovf" <<-EOF
	<?xml version="1.0" encoding="UTF-8"?>
	<!-- Written by images/scripts/make-ova.sh. -->
	<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1"
	          xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1"
	          xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData"
	          xmlns:vssd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData"
	          xmlns:vmw="http://www.vmware.com/schema/ovf"
	          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
	  <References>
	    <File ovf:id="file1" ovf:href="$vmdk" ovf:size="$vmdk_bytes"/>
	  </References>
	  <DiskSection>
	    <Info>Virtual disk information</Info>
	    <Disk ovf:diskId="vmdisk1" ovf:fileRef="file1" ovf:capacity="$capacity" ovf:capacityAllocationUnits="byte"
	          ovf:populatedSize="$populated"
	          ovf:format="http://www.vmware.com/interfaces/specifications/vmdk.html#streamOptimized"/>
	  </DiskSection>
	  <NetworkSection>
	    <Info>The logical networks the appliance is connected to</Info>
	    <Network ovf:name="$NETWORK">
	      <Description>The management network (the first-boot setup sets its address)</Description>
	    </Network>
	  </NetworkSection>
	  <VirtualSystem ovf:id="$NAME">
	    <Info>The Fulcrum load-balancer appliance</Info>
	    <Name>$NAME</Name>
	    <ProductSection>
	      <Info>Information about the installed software</Info>
	      <Product>Fulcrum load-balancer appliance</Product>
	      <Vendor>The Fulcrum project</Vendor>
	      <Version>$version</Version>
	      <FullVersion>$version</FullVersion>
	    </ProductSection>
	    <AnnotationSection>
	      <Info>A description of the virtual machine</Info>
	      <Annotation>Fulcrum $version on Debian 13 (trixie). Boot it, answer the setup on its console, then open https://the-management-address/.</Annotation>
	    </AnnotationSection>
	    <OperatingSystemSection ovf:id="96" vmw:osType="debian12_64Guest">
	      <Info>The guest operating system</Info>
	      <Description>Debian GNU/Linux 13 (64-bit)</Description>
	    </OperatingSystemSection>
	    <VirtualHardwareSection>
	      <Info>Virtual hardware requirements</Info>
	      <System>
	        <vssd:ElementName>Virtual Hardware Family</vssd:ElementName>
	        <vssd:InstanceID>0</vssd:InstanceID>
	        <vssd:VirtualSystemIdentifier>$NAME</vssd:VirtualSystemIdentifier>
	        <vssd:VirtualSystemType>vmx-13</vssd:VirtualSystemType>
	      </System>
	      <Item>
	        <rasd:AllocationUnits>hertz * 10^6</rasd:AllocationUnits>
	        <rasd:Description>Number of virtual CPUs</rasd:Description>
	        <rasd:ElementName>$CPUS virtual CPUs</rasd:ElementName>
	        <rasd:InstanceID>1</rasd:InstanceID>
	        <rasd:ResourceType>3</rasd:ResourceType>
	        <rasd:VirtualQuantity>$CPUS</rasd:VirtualQuantity>
	      </Item>
	      <Item>
	        <rasd:AllocationUnits>byte * 2^20</rasd:AllocationUnits>
	        <rasd:Description>Memory size</rasd:Description>
	        <rasd:ElementName>$MEMORY_MIB MB of memory</rasd:ElementName>
	        <rasd:InstanceID>2</rasd:InstanceID>
	        <rasd:ResourceType>4</rasd:ResourceType>
	        <rasd:VirtualQuantity>$MEMORY_MIB</rasd:VirtualQuantity>
	      </Item>
	      <Item>
	        <rasd:Address>0</rasd:Address>
	        <rasd:Description>SCSI controller</rasd:Description>
	        <rasd:ElementName>SCSI controller 0</rasd:ElementName>
	        <rasd:InstanceID>3</rasd:InstanceID>
	        <rasd:ResourceSubType>lsilogic</rasd:ResourceSubType>
	        <rasd:ResourceType>6</rasd:ResourceType>
	      </Item>
	      <Item>
	        <rasd:AddressOnParent>0</rasd:AddressOnParent>
	        <rasd:Description>The system disk</rasd:Description>
	        <rasd:ElementName>Hard disk 1</rasd:ElementName>
	        <rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource>
	        <rasd:InstanceID>4</rasd:InstanceID>
	        <rasd:Parent>3</rasd:Parent>
	        <rasd:ResourceType>17</rasd:ResourceType>
	      </Item>
	      <Item>
	        <rasd:AddressOnParent>1</rasd:AddressOnParent>
	        <rasd:AutomaticAllocation>true</rasd:AutomaticAllocation>
	        <rasd:Connection>$NETWORK</rasd:Connection>
	        <rasd:Description>E1000 Ethernet adapter on "$NETWORK"</rasd:Description>
	        <rasd:ElementName>Network adapter 1</rasd:ElementName>
	        <rasd:InstanceID>5</rasd:InstanceID>
	        <rasd:ResourceSubType>E1000</rasd:ResourceSubType>
	        <rasd:ResourceType>10</rasd:ResourceType>
	      </Item>
	    </VirtualHardwareSection>
	  </VirtualSystem>
	</Envelope>
	EOF
}

# check_ova OVA SOURCE: the tar's order, its manifest, and the VMDK inside it
# compared with the source disk block by block.
check_ova() {
	local ova=$1 source=$2 dir
	dir=$(mktemp -d)
	# shellcheck disable=SC2064 # the folder is known now
	trap "rm -rf '$dir'" RETURN
	tar -xf "$ova" -C "$dir"
	[[ $(tar -tf "$ova" | head -n 2 | tr '\n' ' ') == "$NAME.ovf $NAME.mf " ]] ||
		die "the OVA does not start with $NAME.ovf then $NAME.mf"
	xmllint --noout "$dir/$NAME.ovf" || die "$NAME.ovf is not well-formed XML"
	(cd "$dir" && sed -E 's/^SHA256\(([^)]+)\)= ([0-9a-f]+)$/\2  \1/' "$NAME.mf" | sha256sum --check --quiet) ||
		die "the manifest does not match the files"
	[[ $(qemu_img_field "$dir/$NAME-disk1.vmdk" format) == vmdk ]] || die "the disk inside is not a VMDK"
	qemu-img compare -q "$source" "$dir/$NAME-disk1.vmdk" || die "the VMDK inside differs from $source"
}

main() {
	(($# == 3)) || die "usage: make-ova.sh DISK OVA VERSION"
	local disk=$1 ova=$2 version=$3 work capacity populated vmdk_bytes
	[[ -f $disk ]] || die "no disk $disk"
	# The version goes into XML as text: keep it to Debian version characters.
	[[ $version =~ ^[A-Za-z0-9.+~:-]+$ ]] || die "unexpected characters in the version '$version'"
	work=$(mktemp -d "${ova%/*}/.make-ova.XXXXXX")
	# shellcheck disable=SC2064 # the folder is known now
	trap "rm -rf '$work'" EXIT

	log "converting $disk to a streamOptimized VMDK"
	qemu-img convert -O vmdk -o subformat=streamOptimized,adapter_type=lsilogic "$disk" "$work/$NAME-disk1.vmdk"
	capacity=$(qemu_img_field "$disk" virtual-size)
	populated=$(allocated_bytes "$disk")
	vmdk_bytes=$(stat -c %s "$work/$NAME-disk1.vmdk")
	write_ovf "$work/$NAME.ovf" "$NAME-disk1.vmdk" "$vmdk_bytes" "$capacity" "$populated" "$version"
	(cd "$work" && sha256sum "$NAME.ovf" "$NAME-disk1.vmdk" | sed -E 's/^([0-9a-f]+)  (.+)$/SHA256(\2)= \1/' >"$NAME.mf")
	tar --format=ustar --owner=0 --group=0 --numeric-owner -C "$work" \
		-cf "$work/out.ova" "$NAME.ovf" "$NAME.mf" "$NAME-disk1.vmdk"
	check_ova "$work/out.ova" "$disk"
	mv "$work/out.ova" "$ova"
	log "$ova: $((capacity >> 30)) GiB disk, $((populated >> 20)) MiB of data, VMDK $((vmdk_bytes >> 20)) MiB"
}

main "$@"
