#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the patched kernel for a small QEMU guest, boot it on an emulated
# idle platform and run one command inside it.
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

EMU_DIR=$TEO_REPO/tools/cpuidle-emu
VM_CONFIG=$EMU_DIR/vm.config
VM_DEBUG_CONFIG=$EMU_DIR/vm-debug.config
# The governors the VM kernel is built with (see vm.config).
VM_GOVERNORS="teo menu ladder"
# The VM kernel's CONFIG_NR_CPUS.
VM_MAX_CPUS=$(sed -n 's/^CONFIG_NR_CPUS=\([0-9]*\)$/\1/p' "$VM_CONFIG")

usage() {
	cat <<EOF2
usage: $teo_prog [options] [--] [COMMAND [ARG...]]

Build the kernel from the private tree of scripts/prepare-tree.sh with the
config fragment tools/cpuidle-emu/vm.config, build the cpuidle-emu module
and a busybox initramfs, boot QEMU (KVM when /dev/kvm is usable, TCG
otherwise), load the emulated idle driver and run COMMAND inside the guest,
chrooted into the host's root file system (mounted read-only over 9p), in
the current folder.  The command's output comes back on stdout/stderr and
its exit status becomes this script's; 125 means the VM itself failed.
Without COMMAND the guest prints its idle setup.

Every step is cached in the tree's cache folder and redone only when its
inputs change.  Builds and guest runs hold the machine-wide build lock
($TEO_LOCK).  Arguments are checked before anything is built or locked.
Ctrl-C or SIGTERM stops QEMU and the build, releases the lock and removes
the temporary run folder.

Options:
  --build-only         build everything, do not boot
  --as-is              build the base tree (KERNEL_SRC) as it is, without
                       this repository's overlay: its own teo and menu, for
                       a patch under review applied to an upstream tree
  --check-args         only check the options, build and boot nothing
  --debug              the debug kernel (own build folder): vm.config plus
                       tools/cpuidle-emu/vm-debug.config -- lockdep, KASAN,
                       RCU and idle-path checks, objtool noinstr validation
                       (also run on cpuidle-emu's object)
  --hz N               CONFIG_HZ of the guest kernel: 100, 250, 300 or 1000
                       (default 250; others get their own build folder)
  --governor NAME      cpuidle.governor= at boot: $VM_GOVERNORS (default teo)
  --profile NAME       emulated platform (default i5-10600K):
                       $(profile_names | tr '\n' ' ')
  --states LIST        custom idle states instead of a profile,
                       "[poll,]LAT/RES[,LAT/RES...]" in microseconds: at most
                       10 states, latency up to 100000, residency not
                       decreasing ("poll" alone is one polling state)
  --no-emu             boot without the emulated idle driver
  --smp N              virtual CPUs, 1 to $VM_MAX_CPUS (default 2)
  --mem MIB            guest memory, 256 to the host's memory (default 1024)
  --disk-latency NS    latency of the guest's /dev/vda, a QEMU null-co disk
                       (default 200000)
  --append ARGS        more kernel command line
  --accel auto|kvm|tcg QEMU accelerator (default auto: KVM when /dev/kvm
                       is usable)
  --out DIR            run folder: command script, console.log, dmesg and
                       status are kept there, and the guest can write to it
                       at the same path (no white space, comma or colon in
                       it; default: a fresh folder under the cache, removed
                       afterwards)
  --timeout SEC        stop the guest after SEC seconds, at least 1
                       (default 3600)
  --console            copy the serial console to stderr
  --help               show this text

In the guest, TEO_EMU_KO and TEO_EMU_ARGS name the loaded module and its
arguments (scripts/bench.sh reloads it for its ceiling runs), and
TEO_KERNEL_HZ the guest kernel's HZ (for the replay of recordings).

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh), TEO_LOCK
EOF2
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

# The config fragments of this build variant, in merge order.
config_fragments() {
	printf '%s\n' "$VM_CONFIG"
	[ "$debug" = 0 ] || printf '%s\n' "$VM_DEBUG_CONFIG"
	[ "$hz" = 250 ] || printf '%s\n' "$slot/hz$hz.config"
}

write_hz_fragment() {
	[ "$hz" = 250 ] && return 0
	printf '# written by %s --hz %s\nCONFIG_HZ_%s=y\nCONFIG_HZ=%s\n' \
		"$teo_prog" "$hz" "$hz" "$hz" > "$slot/hz$hz.config"
}

config_digest() {
	local f
	config_fragments | while IFS= read -r f; do cat "$f"; done | digest
}

# The kernel's inputs: the private copy's stamp (base tree and upstream
# edits), the config fragments and the overlay's files under drivers/ and
# include/ (the selftests and the documentation do not go into the kernel).
kernel_stamp() {
	local path
	{
		cat "$slot/src.stamp"
		config_digest
		while IFS= read -r path; do
			case $path in drivers/*|include/*) ;; *) continue ;; esac
			[ -e "$src/$path" ] || continue
			find "$src/$path" -type f -print0 | sort -z | xargs -0 sha1sum
		done <<EOF2
$TEO_OVERLAY_PATHS
EOF2
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
	cat <<EOF2
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
EOF2
}

# Check that every line of the fragments holds in the .config $1.
check_config() {
	local config=$1 line sym bad='' f
	while IFS= read -r f; do
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
		done < "$f"
	done < <(config_fragments)
	[ -z "$bad" ] ||
		die "these config options did not survive olddefconfig (unmet dependencies?):$bad"
}

make_cmd() {
	mk=(make -C "$src" ARCH=x86_64 -j"$(nproc)")
	if command -v ccache >/dev/null 2>&1; then
		mk+=(CC="ccache gcc")
	fi
	# On a terminal make's own lines show the progress.
	[ -t 2 ] || mk+=(-s)
}

make_kernel() {
	local cfg=$build-config mk frags
	make_cmd
	mkdir -p "$build"
	if [ "$(cat "$build/.teo-config" 2>/dev/null)" != "$(config_digest)" ] ||
	   [ ! -f "$build/.config" ]; then
		# Generate the config aside and copy it only when it differs, so
		# that an unchanged config never triggers a rebuild.
		note "configuring the $variant kernel (tinyconfig + $(config_fragments | xargs -n1 basename | paste -sd' '))"
		mkdir -p "$cfg"
		run_group "${mk[@]}" -s O="$cfg" tinyconfig >&2 ||
			die "make tinyconfig failed"
		mapfile -t frags < <(config_fragments)
		run_group "$src/scripts/kconfig/merge_config.sh" -m -O "$cfg" \
			"$cfg/.config" "${frags[@]}" >/dev/null ||
			die "merge_config.sh failed"
		run_group "${mk[@]}" -s O="$cfg" olddefconfig >&2 ||
			die "make olddefconfig failed"
		check_config "$cfg/.config"
		cmp -s "$cfg/.config" "$build/.config" || cp "$cfg/.config" "$build/.config"
		config_digest > "$build/.teo-config"
	fi
	run_step "building the $variant kernel in $build" \
		"$(kernel_build_time)" "${mk[@]}" O="$build" bzImage modules >&2 ||
		die "the $variant kernel build failed (see the compiler messages above)"
}

# What a kernel build of this variant costs on a 2-core machine.
kernel_build_time() {
	if [ ! -f "$build/vmlinux" ]; then
		if [ "$debug" = 1 ]; then
			echo "about 20-25 min with a cold ccache, 2-4 min warm"
		else
			echo "about 12-16 min with a cold ccache, 1-3 min warm"
		fi
	else
		echo "under a minute when little changed"
	fi
}

# objtool's noinstr validation runs on vmlinux.o only; run it on the
# module's object too, so that a .cpuidle.text function calling
# instrumentable code outside instrumentation_begin()/end() fails the build.
# In a single object a call to a kernel function cannot be seen to stay in
# noinstr code (ct_cpuidle_enter() is), so a warning about a call to a
# function that vmlinux places between __noinstr_text_start/_end or
# __cpuidle_text_start/_end is dropped; every other warning stays.
check_module_noinstr() {
	local objtool=$build/tools/objtool/objtool out left
	grep -qx 'CONFIG_NOINSTR_VALIDATION=y' "$build/.config" || return 0
	[ -x "$objtool" ] || die "no objtool in $build/tools/objtool for the noinstr check"
	out=$("$objtool" --hacks=jump_label --hacks=noinstr --noinstr --link \
		--module "$emu_build/cpuidle-emu.o" 2>&1) || true
	left=$(printf '%s\n' "$out" | awk -v syms=<(nm "$build/vmlinux") '
		BEGIN {
			while ((getline line < syms) > 0) {
				# Fixed-width hex: compare as strings (mawk has
				# no 64-bit integers).
				split(line, f, " ")
				addr[f[3]] = f[1]
			}
			ni0 = addr["__noinstr_text_start"]; ni1 = addr["__noinstr_text_end"]
			ci0 = addr["__cpuidle_text_start"]; ci1 = addr["__cpuidle_text_end"]
		}
		match($0, /call to [A-Za-z0-9_.]+\(\) leaves \.noinstr\.text section/) {
			fn = substr($0, RSTART + 8)
			sub(/\(.*/, "", fn)
			a = addr[fn]
			if (a != "" && ((a >= ni0 && a < ni1) || (a >= ci0 && a < ci1)))
				next
		}
		NF { print }')
	if [ -n "$left" ]; then
		printf '%s\n' "$left" >&2
		die "objtool's noinstr validation of cpuidle-emu.o failed (lines above)"
	fi
	note "objtool --noinstr: cpuidle-emu.o is clean (calls into vmlinux checked against its noinstr sections)"
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
	run_group "${mk[@]}" -s modules >&2 || die "cpuidle-emu module build failed"
	check_module_noinstr
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

kernel_current() {
	[ "$(cat "$build/.teo-stamp" 2>/dev/null)" = "$(kernel_stamp)" ] &&
		[ -f "$build/arch/x86/boot/bzImage" ]
}

module_current() {
	[ "$(cat "$emu_build/.teo-stamp" 2>/dev/null)" = "$(module_stamp)" ] &&
		[ -f "$emu_build/cpuidle-emu.ko" ]
}

# Build what is out of date.  Stamps are checked again under the lock
# because another run may have built while this one waited.
build_all() {
	local kstamp
	write_hz_fragment
	if ! kernel_current || ! module_current; then
		need_space "$slot" 3072
		build_lock
		if ! kernel_current; then
			kstamp=$(kernel_stamp)
			rm -f "$build/.teo-stamp"
			make_kernel
			printf '%s\n' "$kstamp" > "$build/.teo-stamp"
		fi
		if ! module_current; then
			rm -f "$emu_build/.teo-stamp"
			make_module
			module_stamp > "$emu_build/.teo-stamp"
		fi
		build_unlock
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
		printf 'export HOME=/tmp TEO_IN_VM=1 TEO_CACHE=%q TEO_KERNEL_HZ=%s\n' \
			"$TEO_CACHE" "$hz"
		if [ "$use_emu" = 1 ]; then
			printf 'export TEO_EMU_KO=%q TEO_EMU_ARGS=%q\n' \
				"$emu_build/cpuidle-emu.ko" "$emu_args"
		fi
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

# Print the first CPU model QEMU can start a KVM vCPU with, or fail.  An
# openable /dev/kvm is not enough: under nested virtualisation QEMU may
# abort at the first vCPU reset ("failed to set MSR 0x10a", the
# IA32_ARCH_CAPABILITIES of -cpu host).  A paused guest that is still
# alive after two seconds has passed that point.
kvm_cpu_model() {
	local model
	for model in host host,-arch-capabilities; do
		if timeout 2 qemu-system-x86_64 -accel kvm -cpu "$model" -machine pc \
			-nodefaults -display none -monitor none -serial none -S \
			</dev/null >/dev/null 2>&1; [ $? = 124 ]; then
			printf '%s\n' "$model"
			return 0
		fi
	done
	return 1
}

# Does the test kernel boot and run a command under KVM?  Nested KVM can
# pass kvm_cpu_model's paused start and still stop the guest during boot
# ("KVM internal error ... emulation failure" on an instruction it cannot
# emulate), so a real boot decides, once per QEMU, host kernel, CPU model
# and guest kernel release: the verdict is cached in $TEO_CACHE/kvm-probe/.
# Sets kvm_verdict.
kvm_boots() {
	local key file probe_out status=0
	local saved_out=${out:-} saved_timeout=$timeout_s saved_console=$console
	local -a saved_cmd=("${cmd[@]}")
	key=$(printf '%s\n' "$(qemu-system-x86_64 --version | head -n 1)" "$(uname -r)" \
		"$kvm_cpu" "$(cat "$build/include/config/kernel.release" 2>/dev/null)" |
		sha1sum | cut -c1-12)
	file=$TEO_CACHE/kvm-probe/$key
	if [ ! -s "$file" ]; then
		note "trying a boot of the test kernel under KVM (once for this QEMU, host and kernel)"
		mkdir -p "$TEO_CACHE/kvm-probe" "$slot/vm-runs"
		probe_out=$(mktemp -d "$slot/vm-runs/kvm-probe.XXXXXX")
		remove_at_exit "$probe_out"
		out=$probe_out
		cmd=(true)
		# Under KVM this kernel runs a command within seconds.
		timeout_s=60
		console=0
		: > "$out/stdout"
		: > "$out/stderr"
		write_command
		build_lock
		vm_accel=kvm boot_guest >/dev/null 2>"$out/qemu.err" || status=$?
		build_unlock
		if [ "$(cat "$out/status" 2>/dev/null)" = 0 ]; then
			echo ok > "$file"
		else
			printf 'the guest did not run a command within %s s (qemu exit %s; %s)\n' \
				"$timeout_s" "$status" "$( { grep -h -m1 -E 'KVM internal error|emulation failure|error:|Assertion' \
					"$out/qemu.err" 2>/dev/null; tail -n 1 "$out/console.log" 2>/dev/null; } |
					head -n 1 | tr -d '\r')" > "$file"
		fi
		out=$saved_out
		cmd=("${saved_cmd[@]}")
		timeout_s=$saved_timeout
		console=$saved_console
	fi
	kvm_verdict=$(cat "$file")
	[ "$kvm_verdict" = ok ]
}

# Set vm_accel and kvm_cpu: KVM when asked or when it works, else TCG;
# vm_accel_why says why not KVM.
pick_accel() {
	vm_accel=tcg
	kvm_cpu=
	vm_accel_why=
	[ "$accel" != tcg ] || { vm_accel_why="--accel tcg"; return 0; }
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		vm_accel_why=$( [ -e /dev/kvm ] && echo "/dev/kvm not usable by $(id -un)" || echo "no /dev/kvm")
	elif ! kvm_cpu=$(kvm_cpu_model); then
		vm_accel_why="/dev/kvm is there, but QEMU cannot start a KVM vCPU (nested virtualisation?)"
	elif ! kvm_boots; then
		vm_accel_why="/dev/kvm is there, but the test kernel does not boot under KVM: $kvm_verdict"
	else
		vm_accel=kvm
		return 0
	fi
	[ "$accel" != kvm ] || die "--accel kvm: $vm_accel_why"
}

# Boot the guest (the caller holds the build lock) and wait for it, at
# most $timeout_s seconds.  QEMU runs in its own process group; a signal
# to this script stops it (see lib.sh).
boot_guest() {
	local qemu_status=0 qpid emu_path=none kernel_args grace=20 deadline
	local -a qemu tails=()

	[ "$use_emu" = 0 ] || emu_path=$emu_build/cpuidle-emu.ko
	# tsc=reliable: TCG's TSC is one host clock for all vCPUs; without it
	# the clocksource watchdog may drop the TSC over TCG jitter, and a
	# jiffies clocksource has no high-resolution timers (no NO_HZ idle).
	kernel_args="console=ttyS0 loglevel=4 panic=-1 idle=halt tsc=reliable"
	kernel_args+=" tsc_early_khz=$(host_tsc_khz)"
	kernel_args+=" cpuidle.governor=$governor teo.out=$out teo.emu=$emu_path"
	[ -z "$emu_args" ] || kernel_args+=" teo.emu_args=$emu_args"
	[ -z "$keep" ] || kernel_args+=" teo.keep=$keep"
	[ -z "$append_arg" ] || kernel_args+=" $append_arg"

	# Without ACPI the guest finds its CPUs in SeaBIOS's MP table, which
	# lists one CPU per socket: hence one socket per vCPU.
	# shellcheck disable=SC2054 # commas inside QEMU option values
	qemu=(qemu-system-x86_64 -machine pc
	      -smp "$smp,sockets=$smp,cores=1,threads=1" -m "$mem"
	      -nodefaults -no-user-config -display none -no-reboot
	      -monitor none -serial "file:$out/console.log"
	      -kernel "$build/arch/x86/boot/bzImage"
	      -initrd "$initrd_dir/initramfs.cpio.gz"
	      -append "$kernel_args"
	      -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	      -virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap"
	      -drive "if=none,id=null0,driver=null-co,size=1G,read-zeroes=on,latency-ns=$disk_latency"
	      -device virtio-blk-pci,drive=null0)
	if [ "$vm_accel" = kvm ]; then
		qemu+=(-accel kvm -cpu "$kvm_cpu")
	else
		qemu+=(-accel tcg)
	fi

	local t0=$SECONDS
	deadline=$((SECONDS + timeout_s))
	spawn_group "${qemu[@]}"
	qpid=$teo_last
	spawn tail -n +1 -f --pid="$qpid" "$out/stdout"
	tails+=("$teo_last")
	spawn tail -n +1 -f --pid="$qpid" "$out/stderr" >&2
	tails+=("$teo_last")
	if [ "$console" = 1 ]; then
		spawn tail -n +1 -f --pid="$qpid" "$out/console.log" >&2
		tails+=("$teo_last")
	fi
	# The guest resets when done; should it hang after writing its status,
	# stop QEMU after a grace period.
	while kill -0 "$qpid" 2>/dev/null && [ "$grace" -gt 0 ]; do
		if [ -f "$out/status" ] || [ -f "$out/vm-error" ]; then
			grace=$((grace - 1))
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			note "the guest ran into the ${timeout_s}s timeout and was stopped"
			qemu_status=124
			break
		fi
		sleep 1
	done
	if kill -0 "$qpid" 2>/dev/null; then
		stop_group "$qpid"
	else
		wait "$qpid" 2>/dev/null || qemu_status=$?
	fi
	forget_child "$qpid"
	wait "${tails[@]}" 2>/dev/null || true
	for qpid in "${tails[@]}"; do forget_child "$qpid"; done
	note "guest ran $((SECONDS - t0)) s (boot, command, reset)"
	return "$qemu_status"
}

run_vm() {
	local status qemu_status=0

	if [ -z "$out_arg" ]; then
		mkdir -p "$slot/vm-runs"
		out=$(mktemp -d "$slot/vm-runs/run.XXXXXX")
		# Removed at exit unless the VM failed (kept for the console log).
		remove_at_exit "$out"
	else
		mkdir -p "$out_arg" || die "--out: cannot create '$out_arg'"
		out=$(cd "$out_arg" && pwd)
	fi
	rm -f "$out/status" "$out/vm-error" "$out/dmesg" "$out/console.log"
	: > "$out/stdout"
	: > "$out/stderr"
	printf '%s\n' "$vm_accel" > "$out/accel"
	write_command

	build_lock
	boot_guest || qemu_status=$?
	build_unlock

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
	if [ -z "$out_arg" ] && [ "$status" = 125 ]; then
		# Keep it: move it out of the removal list's way.
		mv "$out" "$out.failed"
		note "kept the run folder $out.failed"
	fi
	return "$status"
}

# Paths of this build variant.
set_paths() {
	variant=vm
	[ "$debug" = 0 ] || variant=$variant-debug
	[ "$hz" = 250 ] || variant=$variant-hz$hz
	src=$slot/src
	build=$slot/build-$variant
	emu_build=$slot/build-emu${variant#vm}
	initrd_dir=$slot/vm-initramfs
}

# A number option: digits only, within [$3, $4].
check_number() {
	local opt=$1 n=$2 min=$3 max=$4 why=${5:-}
	case $n in ''|*[!0-9]*) usage_error "$opt: '$n' is not a whole number" ;; esac
	[ "${#n}" -le 12 ] || usage_error "$opt: '$n' is too large"
	n=$((10#$n))
	[ "$n" -ge "$min" ] || usage_error "$opt: $n is below $min${why:+ ($why)}"
	[ "$n" -le "$max" ] ||
		usage_error "$opt: $n is above $max${why:+ ($why)}"
}

# A path the guest must see at the same place: no white space, comma
# (QEMU's option separator) or colon (teo.keep's separator).
check_vm_path() {
	local what=$1 path=$2
	case $path in
	*[[:space:],:]*)
		usage_error "$what '$path' has white space, a comma or a colon, which the VM's command line cannot carry; use another folder" ;;
	/dev/*|/proc/*|/sys/*|/dev|/proc|/sys)
		usage_error "$what '$path' is under /dev, /proc or /sys, which the guest mounts itself; use another folder" ;;
	esac
}

build_only=0
as_is=0
check_only=0
debug=0
hz=250
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
accel=auto
while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1 ;;
	--check-args) check_only=1 ;;
	--debug) debug=1 ;;
	--as-is) as_is=1 ;;
	--governor|--profile|--states|--smp|--mem|--disk-latency|--append|--out|--timeout|--hz|--accel)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		--governor) governor=$2 ;;
		--profile) profile=$2 ;;
		--states) states=$2; [ -n "$2" ] || usage_error "--states: empty list" ;;
		--smp) smp=$2 ;;
		--mem) mem=$2 ;;
		--disk-latency) disk_latency=$2 ;;
		--append) append_arg=$2 ;;
		--out) out_arg=$2; [ -n "$2" ] || usage_error "--out: empty path" ;;
		--timeout) timeout_s=$2 ;;
		--hz) hz=$2 ;;
		--accel) accel=$2 ;;
		esac
		shift
		;;
	--no-emu) use_emu=0 ;;
	--console) console=1 ;;
	--help|-h) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage_error "unknown option '$1'" ;;
	*) break ;;
	esac
	shift
done
cmd=("$@")

# --- every argument is checked before anything is built or locked ---------
case " $VM_GOVERNORS " in
*" $governor "*) ;;
*) usage_error "unknown governor '$governor'; the VM kernel has: $VM_GOVERNORS" ;;
esac
profile_names | grep -qix -- "$profile" ||
	usage_error "unknown profile '$profile'; known: $(profile_names | paste -sd' ')"
[ -z "$states" ] || check_states_list "$states" --states
case $hz in
100|250|300|1000) ;;
*) usage_error "--hz: '$hz' is not one of the kernel's choices 100, 250, 300, 1000" ;;
esac
case $accel in
auto|kvm|tcg) ;;
*) usage_error "--accel: '$accel' is not auto, kvm or tcg" ;;
esac
check_number --smp "$smp" 1 "$VM_MAX_CPUS" "the VM kernel has CONFIG_NR_CPUS=$VM_MAX_CPUS"
host_mib=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
check_number --mem "$mem" 256 "$host_mib" "MiB; the guest needs 256, the host has $host_mib"
check_number --disk-latency "$disk_latency" 0 10000000000 "ns"
check_number --timeout "$timeout_s" 1 604800 "seconds; there is no 'no timeout'"
case $append_arg in
*teo.*|*cpuidle.governor=*) usage_error "--append: teo.* and cpuidle.governor= are set by this script (use --governor)" ;;
esac
if [ -n "$out_arg" ]; then
	check_vm_path --out "$out_arg"
	[ ! -e "$out_arg" ] || [ -d "$out_arg" ] || usage_error "--out: '$out_arg' exists and is not a folder"
	need_writable_dir "$out_arg" "--out $out_arg"
	case $out_arg in /*) ;; *) check_vm_path --out "$PWD/$out_arg" ;; esac
fi
if [ -n "$states" ]; then
	emu_args="states=$states"
else
	emu_args="profile=$profile"
fi

# The guest sees the host's files at their paths.  It mounts its own /tmp
# and /run but keeps the repository, the cache and the current folder
# visible there (teo.keep=); /dev, /proc and /sys are the guest's own.
keep=
for path in "$TEO_REPO" "$TEO_CACHE" "$PWD"; do
	case $path/ in
	/dev/*|/proc/*|/sys/*)
		die "'$path' is under /dev, /proc or /sys, which the guest mounts itself; use another folder" ;;
	*[[:space:]:,]*/)
		[ "$path" != "$TEO_CACHE" ] ||
			die "TEO_CACHE=$TEO_CACHE has white space, a comma or a colon; the VM cannot use it" ;;
	/tmp/*|/run/*) keep=$keep${keep:+:}$path ;;
	esac
	case $path/ in
	/tmp/*[[:space:]:]*|/run/*[[:space:]:]*)
		die "the path '$path' has white space or a colon; the VM cannot keep it visible" ;;
	esac
done
if [ "$accel" = kvm ] && { [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; }; then
	usage_error "--accel kvm: /dev/kvm is missing or not usable by $(id -un)"
fi
[ "$check_only" = 0 ] || exit 0

need_cmd qemu-system-x86_64 busybox readelf gcc make flex bison bc gzip flock setsid
# readelf, not ldd: ldd runs every dynamic loader it finds (32-bit ones too).
! readelf -lW "$(command -v busybox)" 2>/dev/null | grep -q 'program interpreter' ||
	die "busybox is not statically linked; install busybox-static"

tree_args=()
[ "$as_is" = 0 ] || tree_args+=(--as-is)
slot=$("$TEO_REPO/scripts/prepare-tree.sh" "${tree_args[@]}") || exit
set_paths
build_all
if [ "$build_only" = 1 ]; then
	note "kernel: $build/arch/x86/boot/bzImage"
	note "module: $emu_build/cpuidle-emu.ko"
	note "initramfs: $initrd_dir/initramfs.cpio.gz"
	exit 0
fi
pick_accel
if [ "$vm_accel" = kvm ]; then
	note "accelerator: KVM (/dev/kvm, -cpu $kvm_cpu)"
else
	note "accelerator: TCG, software emulation ($vm_accel_why; timings are coarser and slower)"
fi
status=0
run_vm || status=$?
exit "$status"
