#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the patched kernel for a small QEMU guest, boot it on an emulated
# idle platform and run one command inside it.
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

EMU_DIR=$TEO_REPO/tools/cpuidle-emu
VM_CONFIG=$EMU_DIR/vm.config
# The governors the VM kernel is built with (see vm.config).
VM_GOVERNORS="teo menu ladder"

usage() {
	cat <<EOF
usage: $teo_prog [options] [--] [COMMAND [ARG...]]

Build the kernel from the private tree of scripts/prepare-tree.sh with the
config fragment tools/cpuidle-emu/vm.config, build the cpuidle-emu module
and a busybox initramfs, boot QEMU (TCG, no KVM needed), load the emulated
idle driver and run COMMAND inside the guest, chrooted into the host's root
file system (mounted read-only over 9p), in the current folder.  The
command's output comes back on stdout/stderr and its exit status becomes
this script's; 125 means the VM itself failed.  Without COMMAND the guest
prints its idle setup.

Every step is cached in the tree's cache folder and redone only when its
inputs change.  Builds and guest runs hold the machine-wide build lock
($TEO_LOCK).

Options:
  --build-only         build everything, do not boot
  --governor NAME      cpuidle.governor= at boot: $VM_GOVERNORS (default teo)
  --profile NAME       emulated platform (default i5-10600K):
                       $(profile_names | tr '\n' ' ')
  --states LIST        custom idle states instead of a profile,
                       "[poll,]LAT/RES[,LAT/RES...]" in microseconds
  --no-emu             boot without the emulated idle driver
  --smp N              virtual CPUs (default 2)
  --mem MIB            guest memory (default 1024)
  --disk-latency NS    latency of the guest's /dev/vda, a QEMU null-co disk
                       (default 200000)
  --append ARGS        more kernel command line
  --out DIR            run folder: command script, console.log, dmesg and
                       status are kept there, and the guest can write to it
                       at the same path (default: a fresh folder under the
                       cache, removed afterwards)
  --timeout SEC        stop the guest after SEC seconds (default 3600)
  --console            copy the serial console to stderr
  --help               show this text

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh)
EOF
}

# Profile names, as the module source defines them.
profile_names() {
	sed -n 's/^[[:space:]]*{ "\([^"]*\)", \(true\|false\), emu_.*/\1/p' \
		"$EMU_DIR/cpuidle-emu.c"
}

# sha1 of everything read from stdin.
digest() {
	sha1sum | cut -c1-40
}

# The kernel's inputs: the private copy's stamp (base tree and upstream
# edits), the config fragment and the overlay's files under drivers/ (the
# selftests and the documentation do not go into the kernel).
kernel_stamp() {
	local path
	{
		cat "$slot/src.stamp"
		cat "$VM_CONFIG"
		while IFS= read -r path; do
			case $path in drivers/*) ;; *) continue ;; esac
			[ -e "$src/$path" ] || continue
			find "$src/$path" -type f -print0 | sort -z | xargs -0 sha1sum
		done <<EOF
$TEO_OVERLAY_PATHS
EOF
	} | digest
}

module_stamp() {
	{
		cat "$build/.teo-stamp" 2>/dev/null
		cat "$EMU_DIR/cpuidle-emu.c" "$EMU_DIR/Makefile"
	} | digest
}

initramfs_stamp() {
	{
		sha1sum "$(command -v busybox)"
		cat "$EMU_DIR/vm-init"
		initramfs_list /dev/null
	} | digest
}

# gen_init_cpio list for the initramfs; $1 is the init script.
initramfs_list() {
	cat <<EOF
dir /bin 755 0 0
dir /dev 755 0 0
nod /dev/console 600 0 0 c 5 1
dir /proc 755 0 0
dir /sys 755 0 0
dir /tmp 1777 0 0
dir /host 755 0 0
file /bin/busybox $(command -v busybox) 755 0 0
slink /bin/sh busybox 777 0 0
file /init $1 755 0 0
EOF
}

# Check that every line of the fragment holds in the .config $1.
check_config() {
	local config=$1 line sym bad=
	while IFS= read -r line; do
		case $line in
		"# CONFIG_"*" is not set")
			sym=${line#"# "}
			sym=${sym%" is not set"}
			! grep -q "^$sym=" "$config" || bad="$bad $sym"
			;;
		CONFIG_*)
			grep -qx "$line" "$config" || bad="$bad ${line%%=*}"
			;;
		esac
	done < "$VM_CONFIG"
	[ -z "$bad" ] ||
		die "these vm.config options did not survive olddefconfig (unmet dependencies?):$bad"
}

make_kernel() {
	local cfg=$slot/build-vm-config
	local mk=(make -C "$src" ARCH=x86_64 -j"$(nproc)")
	if command -v ccache >/dev/null 2>&1; then
		mk+=(CC="ccache gcc")
	fi
	mkdir -p "$build"
	if [ "$(cat "$build/.teo-config" 2>/dev/null)" != "$(digest < "$VM_CONFIG")" ] ||
	   [ ! -f "$build/.config" ]; then
		# Generate the config aside and copy it only when it differs, so
		# that an unchanged config never triggers a rebuild.
		note "configuring the VM kernel (tinyconfig + vm.config)"
		mkdir -p "$cfg"
		"${mk[@]}" -s O="$cfg" tinyconfig >&2
		"$src/scripts/kconfig/merge_config.sh" -m -O "$cfg" \
			"$cfg/.config" "$VM_CONFIG" >/dev/null
		"${mk[@]}" -s O="$cfg" olddefconfig >&2
		check_config "$cfg/.config"
		cmp -s "$cfg/.config" "$build/.config" || cp "$cfg/.config" "$build/.config"
		digest < "$VM_CONFIG" > "$build/.teo-config"
	fi
	note "building the kernel in $build"
	"${mk[@]}" -s O="$build" bzImage modules >&2 || die "kernel build failed"
}

make_module() {
	# W=1 and warnings as errors: the module must stay warning-free.
	local f mk=(make -C "$build" M="$emu_build" ARCH=x86_64 W=1 KCFLAGS=-Werror)
	if command -v ccache >/dev/null 2>&1; then
		mk+=(CC="ccache gcc")
	fi
	mkdir -p "$emu_build"
	for f in cpuidle-emu.c Makefile; do
		cmp -s "$EMU_DIR/$f" "$emu_build/$f" || cp "$EMU_DIR/$f" "$emu_build/$f"
	done
	note "building cpuidle-emu.ko in $emu_build"
	"${mk[@]}" -s modules >&2 || die "cpuidle-emu module build failed"
}

make_initramfs() {
	local list tmp
	mkdir -p "$initrd_dir"
	list=$initrd_dir/list
	initramfs_list "$EMU_DIR/vm-init" > "$list"
	tmp=$initrd_dir/initramfs.cpio.gz.tmp
	"$build/usr/gen_init_cpio" "$list" | gzip -9 > "$tmp" ||
		die "could not pack the initramfs"
	mv "$tmp" "$initrd_dir/initramfs.cpio.gz"
}

# The build, done while holding the build lock.  Stamps are checked again
# here because another run may have built while this one waited.
build_locked() {
	local kstamp

	kstamp=$(kernel_stamp)
	if [ "$(cat "$build/.teo-stamp" 2>/dev/null)" != "$kstamp" ] ||
	   [ ! -f "$build/arch/x86/boot/bzImage" ]; then
		rm -f "$build/.teo-stamp"
		make_kernel
		printf '%s\n' "$kstamp" > "$build/.teo-stamp"
	fi
	if [ "$(cat "$emu_build/.teo-stamp" 2>/dev/null)" != "$(module_stamp)" ] ||
	   [ ! -f "$emu_build/cpuidle-emu.ko" ]; then
		rm -f "$emu_build/.teo-stamp"
		make_module
		module_stamp > "$emu_build/.teo-stamp"
	fi
}

build_all() {
	local kstamp
	kstamp=$(kernel_stamp)
	if [ "$(cat "$build/.teo-stamp" 2>/dev/null)" != "$kstamp" ] ||
	   [ ! -f "$build/arch/x86/boot/bzImage" ] ||
	   [ "$(cat "$emu_build/.teo-stamp" 2>/dev/null)" != "$(module_stamp)" ] ||
	   [ ! -f "$emu_build/cpuidle-emu.ko" ]; then
		need_space "$slot" 3072
		note "building under the build lock $TEO_LOCK"
		with_build_lock "$0" --locked-step build
	fi
	if [ "$(cat "$initrd_dir/.teo-stamp" 2>/dev/null)" != "$(initramfs_stamp)" ] ||
	   [ ! -f "$initrd_dir/initramfs.cpio.gz" ]; then
		note "packing the initramfs"
		make_initramfs
		initramfs_stamp > "$initrd_dir/.teo-stamp"
	fi
}

# Write the script the guest runs: cd to the caller's folder, run the
# command with its arguments quoted for bash.
write_command() {
	local arg
	{
		printf '# generated by %s\n' "$teo_prog"
		printf 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n'
		printf 'export HOME=/tmp TEO_IN_VM=1 TEO_CACHE=%q\n' "$TEO_CACHE"
		printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
		# shellcheck disable=SC2016 # expanded in the guest
		if [ ${#cmd[@]} -eq 0 ]; then
			printf '%s\n' 'd=/sys/devices/system/cpu/cpuidle'
			printf '%s\n' 'echo "driver $(cat $d/current_driver) governor $(cat $d/current_governor_ro)"'
			printf '%s\n' 'grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/{name,latency,residency}'
		else
			printf 'exec'
			for arg in "${cmd[@]}"; do
				printf ' %q' "$arg"
			done
			printf '\n'
		fi
	} > "$out/vm-cmd"
}

# Print the host's TSC frequency in kHz.  Under TCG the guest's TSC is the
# host's, and a guest without ACPI has no HPET or PM timer to calibrate it
# against: its PIT calibration fails now and then, the TSC is marked
# unstable and the guest falls back to jiffies, without high-resolution
# timers or a stoppable tick.  Telling it the frequency avoids that.
host_tsc_khz() {
	local bin=$slot/host-tsc-khz
	if [ ! -x "$bin" ]; then
		printf '%s\n' '#include <stdio.h>' '#include <time.h>' \
			'#include <x86intrin.h>' \
			'static long long ns(void) { struct timespec t;' \
			'  clock_gettime(CLOCK_MONOTONIC_RAW, &t);' \
			'  return t.tv_sec * 1000000000LL + t.tv_nsec; }' \
			'int main(void) { long long t0 = ns(), t;' \
			'  unsigned long long c0 = __rdtsc(), c;' \
			'  do t = ns(); while (t - t0 < 200000000LL);' \
			'  c = __rdtsc();' \
			'  printf("%llu\n", (c - c0) * 1000000ULL / (t - t0));' \
			'  return 0; }' > "$bin.c"
		gcc -O2 -o "$bin" "$bin.c" || die "cannot build $bin"
	fi
	"$bin"
}

# Boot the guest; done while holding the build lock so that no build
# shares the machine with it.
boot_locked() {
	local qemu_status=0 t1 t2 qpid emu_path=none append
	local -a qemu

	[ "$VM_EMU" = 0 ] || emu_path=$emu_build/cpuidle-emu.ko
	# tsc=reliable: TCG's TSC is one host clock for all vCPUs; without it
	# the clocksource watchdog may drop the TSC over TCG jitter, and a
	# jiffies clocksource has no high-resolution timers (no NO_HZ idle).
	append="console=ttyS0 loglevel=4 panic=-1 idle=halt tsc=reliable"
	append+=" tsc_early_khz=$(host_tsc_khz)"
	append+=" cpuidle.governor=$VM_GOVERNOR teo.out=$out teo.emu=$emu_path"
	[ -z "$VM_EMU_ARGS" ] || append+=" teo.emu_args=$VM_EMU_ARGS"
	[ -z "$VM_KEEP" ] || append+=" teo.keep=$VM_KEEP"
	[ -z "$VM_APPEND" ] || append+=" $VM_APPEND"

	# Without ACPI the guest finds its CPUs in SeaBIOS's MP table, which
	# lists one CPU per socket: hence one socket per vCPU.
	# shellcheck disable=SC2054 # commas inside QEMU option values
	qemu=(qemu-system-x86_64 -accel tcg -machine pc -smp "$VM_SMP,sockets=$VM_SMP,cores=1,threads=1" -m "$VM_MEM"
	      -nodefaults -no-user-config -display none -no-reboot
	      -monitor none -serial "file:$out/console.log"
	      -kernel "$build/arch/x86/boot/bzImage"
	      -initrd "$initrd_dir/initramfs.cpio.gz"
	      -append "$append"
	      -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	      -virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap"
	      -drive "if=none,id=null0,driver=null-co,size=1G,read-zeroes=on,latency-ns=$VM_DISK_LATENCY"
	      -device virtio-blk-pci,drive=null0)

	local t0=$SECONDS
	timeout -k 10 "$VM_TIMEOUT" "${qemu[@]}" &
	qpid=$!
	tail -n +1 -f --pid="$qpid" "$out/stdout" &
	t1=$!
	tail -n +1 -f --pid="$qpid" "$out/stderr" >&2 &
	t2=$!
	if [ "$VM_CONSOLE" = 1 ]; then
		tail -n +1 -f --pid="$qpid" "$out/console.log" >&2 &
	fi
	# The guest resets when done; should it hang after writing its status,
	# stop QEMU after a grace period.
	local grace=20
	while kill -0 "$qpid" 2>/dev/null && [ "$grace" -gt 0 ]; do
		if [ -f "$out/status" ] || [ -f "$out/vm-error" ]; then
			grace=$((grace - 1))
		fi
		sleep 1
	done
	kill "$qpid" 2>/dev/null || true
	wait "$qpid" || qemu_status=$?
	wait "$t1" "$t2" || true
	[ "$qemu_status" -ne 124 ] ||
		note "the guest ran into the ${VM_TIMEOUT}s timeout and was stopped"
	note "guest ran $((SECONDS - t0)) s (boot, command, reset)"
	return "$qemu_status"
}

run_vm() {
	local status qemu_status=0

	if [ -z "$out_arg" ]; then
		mkdir -p "$slot/vm-runs"
		out=$(mktemp -d "$slot/vm-runs/run.XXXXXX")
	else
		mkdir -p "$out_arg"
		out=$(cd "$out_arg" && pwd)
	fi
	case $out in
	*[[:space:]]*) die "the run folder path '$out' has white space; use --out" ;;
	esac
	rm -f "$out/status" "$out/vm-error" "$out/dmesg" "$out/console.log"
	: > "$out/stdout"
	: > "$out/stderr"
	write_command

	export VM_GOVERNOR=$governor VM_SMP=$smp VM_MEM=$mem VM_TIMEOUT=$timeout_s
	export VM_EMU=$use_emu VM_EMU_ARGS=$emu_args VM_APPEND=$append_arg
	export VM_DISK_LATENCY=$disk_latency VM_CONSOLE=$console VM_OUT=$out
	with_build_lock "$0" --locked-step boot || qemu_status=$?

	if [ -f "$out/vm-error" ]; then
		note "the guest failed: $(cat "$out/vm-error"); see $out/console.log"
		status=125
	elif [ ! -f "$out/status" ]; then
		note "the guest stopped without running the command (qemu exit $qemu_status); console:"
		tail -n 20 "$out/console.log" >&2 2>/dev/null || true
		status=125
	elif grep -q 'Marking TSC unstable' "$out/dmesg" 2>/dev/null; then
		# Timers on jiffies: every measurement of this run is off.
		note "the guest lost its TSC clocksource (see $out/dmesg); its results are not valid"
		status=125
	else
		status=$(cat "$out/status")
	fi
	if [ -z "$out_arg" ]; then
		if [ "$status" = 125 ]; then
			note "kept the run folder $out"
		else
			rm -rf "$out"
		fi
	fi
	return "$status"
}

# Paths shared by every step.
set_paths() {
	src=$slot/src
	build=$slot/build-vm
	emu_build=$slot/build-emu
	initrd_dir=$slot/vm-initramfs
}

# Internal re-entry: the steps that must hold the build lock.  The lock is
# not recursive, so they must not call prepare-tree.sh: the caller passes
# the slot.
if [ "${1:-}" = --locked-step ]; then
	slot=${VM_SLOT:?}
	set_paths
	case ${2:-} in
	build) build_locked ;;
	boot) out=$VM_OUT; boot_locked ;;
	*) die "unknown internal step '${2:-}'" ;;
	esac
	exit 0
fi

build_only=0
governor=teo
profile=i5-10600K
states=
use_emu=1
smp=2
mem=1024
disk_latency=200000
append_arg=
out_arg=
timeout_s=3600
console=0
while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1 ;;
	--governor|--profile|--states|--smp|--mem|--disk-latency|--append|--out|--timeout)
		[ $# -ge 2 ] || die "$1 needs a value"
		case $1 in
		--governor) governor=$2 ;;
		--profile) profile=$2 ;;
		--states) states=$2 ;;
		--smp) smp=$2 ;;
		--mem) mem=$2 ;;
		--disk-latency) disk_latency=$2 ;;
		--append) append_arg=$2 ;;
		--out) out_arg=$2 ;;
		--timeout) timeout_s=$2 ;;
		esac
		shift
		;;
	--no-emu) use_emu=0 ;;
	--console) console=1 ;;
	--help|-h) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; die "unknown option '$1'" ;;
	*) break ;;
	esac
	shift
done
cmd=("$@")

case " $VM_GOVERNORS " in
*" $governor "*) ;;
*) die "unknown governor '$governor'; the VM kernel has: $VM_GOVERNORS" ;;
esac
profile_names | grep -qix -- "$profile" ||
	die "unknown profile '$profile'; known: $(profile_names | tr '\n' ' ')"
[ -z "$states" ] || [[ $states =~ ^(poll,)?[0-9]+/[0-9]+(,[0-9]+/[0-9]+)*$ ]] ||
	die "bad --states '$states': want [poll,]LAT/RES[,LAT/RES...] in microseconds"
for n in "$smp" "$mem" "$disk_latency" "$timeout_s"; do
	case $n in ''|*[!0-9]*) die "'$n' is not a number" ;; esac
done
[ "$smp" -ge 1 ] || die "--smp must be at least 1"
if [ -n "$states" ]; then
	emu_args="states=$states"
else
	emu_args="profile=$profile"
fi

need_cmd qemu-system-x86_64 busybox gcc make flex bison bc gzip flock timeout
! ldd "$(command -v busybox)" >/dev/null 2>&1 ||
	die "busybox is not statically linked; install busybox-static"

# The guest sees the host's files at their paths.  It mounts its own /tmp
# and /run but keeps the repository, the cache and the current folder
# visible there (teo.keep=); /dev, /proc and /sys are the guest's own.
keep=
for path in "$TEO_REPO" "$TEO_CACHE" "$PWD"; do
	case $path/ in
	/dev/*|/proc/*|/sys/*)
		die "'$path' is under /dev, /proc or /sys, which the guest mounts itself; use another folder" ;;
	*[[:space:]:]*/) ;;
	/tmp/*|/run/*) keep=$keep${keep:+:}$path ;;
	esac
	case $path/ in
	/tmp/*[[:space:]:]*|/run/*[[:space:]:]*)
		die "the path '$path' has white space or a colon; the VM cannot keep it visible" ;;
	esac
done
export VM_KEEP=$keep
slot=$("$TEO_REPO/scripts/prepare-tree.sh")
export VM_SLOT=$slot
set_paths
build_all
if [ "$build_only" = 1 ]; then
	note "kernel: $build/arch/x86/boot/bzImage"
	note "module: $emu_build/cpuidle-emu.ko"
	note "initramfs: $initrd_dir/initramfs.cpio.gz"
	exit 0
fi
status=0
run_vm || status=$?
exit "$status"
