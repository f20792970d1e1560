# Building on the EFA installer's stack (issue 59, item 9): what make does
# with HWLOC_HOME, MPI_HOME and CUDA_HOME prefixes laid out as the installer
# and the distributions lay them out, shown on fake prefixes that stand for
# them (docs/building.md). Each test runs make on one object, or make -n and
# then the one link line it printed: seconds, not a build.

# The link line make prints for TARGET (make -n -B V=1, the extra make
# arguments given), run with its output sent to OUT instead.
relink() { # TARGET OUT MAKEARGS...
	local target=$1 out=$2 line i
	shift 2
	make -n -B V=1 BUILD="$BUILD" SAN="${EFAB_SAN:-0}" "$@" "$target" >"$WORK/relink.mk" 2>&1 ||
		{ cat "$WORK/relink.mk"; die "make -n $* $target failed"; }
	line=$(grep -e " -o $target " "$WORK/relink.mk" | tail -n 1)
	[ -n "$line" ] || { cat "$WORK/relink.mk"; die "no link line for $target"; }
	local -a args
	read -ra args <<<"$line"
	for i in "${!args[@]}"; do
		[ "${args[$i]}" = "-o" ] && args[$((i + 1))]=$out
	done
	echo "link: ${args[*]}"
	"${args[@]}" || die "the link line failed"
}

# hwloc >= 2.0: lib/topo.c uses the 2.x API (I/O type filters, io_first_child).
# Amazon Linux 2's hwloc-devel is 1.11: there the build stops with one line
# that says so (make checks before compiling topo.c), not a page of
# undeclared identifiers. A fake hwloc.h of version 1.11 stands for it.
t_build_hwloc1_one_line() {
	local fake="$WORK/hwloc-1.11" obj="$WORK/b/lib/topo.o"
	mkdir -p "$fake/include" "$fake/lib"
	printf '%s\n' '/* stands for hwloc 1.11 (Amazon Linux 2) */' \
		'#define HWLOC_API_VERSION 0x00010b00' >"$fake/include/hwloc.h"
	make BUILD="$WORK/b" HWLOC_HOME="$fake" "$obj" >"$WORK/m" 2>&1 &&
		{ cat "$WORK/m"; die "lib/topo.c compiled against hwloc 1.11"; }
	cat "$WORK/m"
	local n
	# one line (make's own "*** [...] Error 1" aside), before any compiler
	grep -Ev '^make(\[[0-9]+\])?: (\*\*\* |Entering directory|Leaving directory)' "$WORK/m" >"$WORK/lines"
	[ "$(wc -l <"$WORK/lines")" = 1 ] || die "$(wc -l <"$WORK/lines") lines, expected one"
	grep -q 'hwloc >= 2.0 is required.*HWLOC_HOME' "$WORK/lines" ||
		die "the line does not say hwloc >= 2.0 is required and what to set"
	[ ! -e "$obj" ] || die "an object was made"
}

# HWLOC_HOME with lib64 only (hwloc built with --libdir=.../lib64, as the
# RPM-based distributions lay it out): the link finds it there and the
# binary's run path names it, so libhwloc comes from that prefix at run time.
t_build_hwloc_lib64() {
	local fake="$WORK/hwloc" real inc
	real=$(ldconfig -p | awk '/libhwloc\.so\.[0-9]+ .*x86-64|libhwloc\.so\.[0-9]+ \(libc6,x86-64\)/ {print $NF; exit}')
	[ -n "$real" ] || real=$(ldconfig -p | awk '/libhwloc\.so\./ {print $NF; exit}')
	[ -n "$real" ] || { echo "no libhwloc.so.N found by ldconfig -p"; exit 77; }
	inc=$(pkg-config --variable=includedir hwloc 2>/dev/null)
	inc=${inc:-/usr/include}
	mkdir -p "$fake/include" "$fake/lib64"
	ln -s "$inc/hwloc.h" "$inc/hwloc" "$fake/include/"
	ln -s "$(readlink -f "$real")" "$fake/lib64/$(basename "$real")"
	ln -s "$(readlink -f "$real")" "$fake/lib64/libhwloc.so"
	relink "$BUILD/bin/efab_topo" "$WORK/efab_topo" HWLOC_HOME="$fake"
	readelf -d "$WORK/efab_topo" | grep -E 'RUNPATH|RPATH' | tee "$WORK/rp"
	grep -q "$fake/lib64" "$WORK/rp" || die "no run path for $fake/lib64"
	ldd "$WORK/efab_topo" | grep libhwloc | tee "$WORK/ldd"
	grep -q "=> $fake/lib64/libhwloc" "$WORK/ldd" || die "libhwloc is not taken from $fake/lib64"
	timeout 20 "$WORK/efab_topo" -h >/dev/null || die "efab_topo -h failed"
}

# MPI_HOME=/opt/amazon/openmpi: its libmpi is in lib64 (Amazon Linux, RHEL)
# or lib (Ubuntu), neither on the loader's path; the binaries carry a run
# path for both, so they start without LD_LIBRARY_PATH. A fake prefix whose
# bin/mpicc wraps the system's and whose lib64 holds libmpi stands for it.
t_build_mpi_runpath() {
	command -v mpicc >/dev/null || { echo "no mpicc"; exit 77; }
	local fake="$WORK/openmpi" real
	real=$(ldd "$BIN/efab_put_lat" | awk '/libmpi\.so/ {print $3; exit}')
	[ -n "$real" ] || { echo "efab_put_lat links no libmpi.so"; exit 77; }
	mkdir -p "$fake/bin" "$fake/lib64"
	printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v mpicc)" >"$fake/bin/mpicc"
	printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v mpicxx || echo mpicxx)" >"$fake/bin/mpicxx"
	chmod +x "$fake/bin/mpicc" "$fake/bin/mpicxx"
	ln -s "$(readlink -f "$real")" "$fake/lib64/$(basename "$real")"
	relink "$BUILD/bin/efab_put_lat" "$WORK/put_lat" MPI_HOME="$fake"
	readelf -d "$WORK/put_lat" | grep -E 'RUNPATH|RPATH' | tee "$WORK/rp"
	grep -q "$fake/lib64" "$WORK/rp" || die "no run path for $fake/lib64 (MPI_HOME's libraries)"
	env -u LD_LIBRARY_PATH ldd "$WORK/put_lat" | grep libmpi | tee "$WORK/ldd"
	grep -q "=> $fake/lib64/libmpi" "$WORK/ldd" || die "libmpi is not taken from MPI_HOME's lib64"
}

# The NVSHMEM hint names the pip wheel that matches the CUDA major of the
# toolkit make found (CUDA_HOME's cuda.h): nvidia-nvshmem-cu12 for a CUDA 12
# toolkit (most p5en PyTorch stacks), -cu13 for CUDA 13.
t_build_nvshmem_hint_cuda_major() {
	local v major cuda
	for v in 12080 13000; do
		major=${v%???}
		cuda="$WORK/cuda-$major"
		mkdir -p "$cuda/include"
		printf '#define CUDA_VERSION %s\n' "$v" >"$cuda/include/cuda.h"
		make -n BUILD="$WORK/b" CUDA_HOME="$cuda" NVSHMEM_HOME="$WORK/none" all >"$WORK/m$major" 2>&1
		grep 'NVSHMEM not found' "$WORK/m$major" | tee "$WORK/hint"
		[ -s "$WORK/hint" ] || { cat "$WORK/m$major"; die "no NVSHMEM hint"; }
		grep -q "nvidia-nvshmem-cu$major" "$WORK/hint" || die "CUDA $major: the hint does not name nvidia-nvshmem-cu$major"
		grep -o 'nvidia-nvshmem-cu[0-9]*' "$WORK/hint" | grep -qv "cu$major$" &&
			die "CUDA $major: the hint names another wheel"
	done
	return 0
}
