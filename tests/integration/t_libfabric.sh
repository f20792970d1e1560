# Which libfabric a build uses and a run names (issue 45).

# No LIBFABRIC_HOME: the EFA installer's libfabric (EFA_PREFIX, default
# /opt/amazon/efa) comes before the system's and efasim's build; a fake
# install tree stands for it. LIBFABRIC_HOME still wins; without the tree the
# build is what it was.
t_make_efa_prefix() {
	local fake="$WORK/opt/amazon/efa" obj="$WORK/b/lib/abi.o"
	mkdir -p "$fake/include/rdma" "$fake/lib"
	cp /dev/null "$fake/include/rdma/fabric.h"
	make -n -B V=1 BUILD="$WORK/b" EFA_PREFIX="$fake" "$obj" >"$WORK/m1" 2>&1
	grep -q "^make: using LIBFABRIC_HOME=$fake (the EFA installer's libfabric" "$WORK/m1" ||
		{ cat "$WORK/m1"; die "no message naming $fake"; }
	grep -- "lib/abi.c" "$WORK/m1" | grep -q -- "-I$fake/include" ||
		{ cat "$WORK/m1"; die "compile line does not use $fake/include"; }
	make -n -B V=1 BUILD="$WORK/b" EFA_PREFIX="$fake" LIBFABRIC_HOME=/elsewhere "$obj" >"$WORK/m2" 2>&1
	grep -- "lib/abi.c" "$WORK/m2" | grep -q -- "-I/elsewhere/include" || die "LIBFABRIC_HOME does not win"
	grep -q -- "$fake" "$WORK/m2" && die "EFA_PREFIX used although LIBFABRIC_HOME was set"
	rm -r "$fake/include"
	make -n -B V=1 BUILD="$WORK/b" EFA_PREFIX="$fake" "$obj" >"$WORK/m3" 2>&1
	grep -q -- "$fake" "$WORK/m3" && die "EFA_PREFIX used without include/rdma/fabric.h"
	make -s EFA_PREFIX="$fake" libfabric-home | grep -q "^LIBFABRIC_HOME=" || die "make libfabric-home"
}

# Every benchmark's header names the libfabric it runs: fi_version() and the
# path of the libfabric.so loaded (lib/abi.c, dl_iterate_phdr), the one this
# process mapped.
t_header_names_libfabric() {
	local b lib
	lib=$(FI_PROVIDER=tcp timeout 30 "$BIN/efab_mr_reg" -p tcp -m 4K -n 1 -v 2>&1 |
		sed -n 's/^# libfabric running [0-9.]* (\([^,)]*\).*/\1/p')
	[ -n "$lib" ] && [ -e "$lib" ] || die "efab_mr_reg's header names no libfabric.so: '$lib'"
	local ld
	ld=$(ldd "$BIN/efab_mr_reg" | awk '/libfabric\.so/ {print $3; exit}')
	[ "$(readlink -f "$ld")" = "$(readlink -f "$lib")" ] ||
		die "header's $lib is not the library ldd resolves ($ld)"
	for b in put_lat get_lat put_bw get_bw atomic_lat atomic_bw connect; do
		expect_rc 0 timeout 60 mpirun -np 2 --oversubscribe "$BIN/efab_$b" -v -p tcp -m 8 -n 2
		grep -q "^# libfabric running [0-9]*\.[0-9]* ($lib" "$WORK/last.out" ||
			die "efab_$b's header does not name $lib"
	done
}
