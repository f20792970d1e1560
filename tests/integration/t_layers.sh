# The layering of the C code (tests/layers.py on the objects, tests/layers.conf
# the ladder): the engine is a ladder, never a circle -- the context at the
# bottom, patterns, evidence and provenance above it, the operation families,
# the lifecycle (harness.c) on top -- and lib/ calls nothing of bench/.

t_layers_ladder() {
	expect_rc 0 python3 tests/layers.py --build "$BUILD" --graph
	grep -q "no circle, no upward call or include" "$WORK/last.out" || die "no verdict line"
	# the graph was read from the objects: the patterns' calls down to the context are in it
	grep -q "^bench/engine/pattern.c \[parts\] -> bench/engine/context.c \[context\]: .*efab_note" \
		"$WORK/last.out" || die "pattern.c -> context.c missing from the graph"
	grep -q "^bench/engine/harness.c \[harness\] -> bench/engine/pattern.c \[parts\]: .*efab_pingpong" \
		"$WORK/last.out" || die "harness.c -> pattern.c missing from the graph"
	# every engine file below the lifecycle stays off harness.h
	! grep -l '#include "harness.h"' bench/engine/*.c bench/ops/* | grep -v 'bench/engine/harness.c' ||
		die "a file below the lifecycle includes harness.h"
}

# The checker fails where it should: a tree whose context calls the harness
# (a circle and an upward call), a pattern that includes harness.h, and a
# file the ladder does not name.
t_layers_catches_a_circle() {
	local t="$WORK/tree" o="$WORK/tree/build/bench/engine"
	mkdir -p "$t/bench/engine" "$t/lib" "$o"
	cat >"$t/bench/engine/context.c" <<'C'
void efab_lifecycle_step(void);
void efab_note_x(void) { efab_lifecycle_step(); }
C
	cat >"$t/bench/engine/pattern.c" <<'C'
#include "harness.h"
void efab_note_x(void);
void efab_pattern_x(void) { efab_note_x(); }
C
	cat >"$t/bench/engine/harness.c" <<'C'
void efab_pattern_x(void);
void efab_lifecycle_step(void) { efab_pattern_x(); }
C
	: >"$t/bench/engine/harness.h"
	echo 'void efab_stray(void) {}' >"$t/bench/engine/stray.c"
	local f
	for f in context pattern harness stray; do
		cc -c -I"$t/bench/engine" "$t/bench/engine/$f.c" -o "$o/$f.o" || die "cc $f.c"
	done
	expect_rc 1 python3 tests/layers.py --root "$t" --build "$t/build" --no-make
	grep -q "circle: bench/engine/context.c <-> bench/engine/harness.c <-> bench/engine/pattern.c" \
		"$WORK/last.out" || die "the circle not found"
	grep -q "upward call: bench/engine/context.c \[context\] calls bench/engine/harness.c \[harness\]: efab_lifecycle_step" \
		"$WORK/last.out" || die "the upward call not found"
	grep -q "upward include: bench/engine/pattern.c \[parts\] includes bench/engine/harness.h \[harness\]" \
		"$WORK/last.out" || die "the upward include not found"
	grep -q "bench/engine/stray.c: not on the ladder" "$WORK/last.out" || die "the undeclared file not found"
	# without the ladder, only the circle
	expect_rc 1 python3 tests/layers.py --root "$t" --build "$t/build" --no-make --all
	grep -q "circle:" "$WORK/last.out" || die "--all: the circle not found"
	! grep -q "upward" "$WORK/last.out" || die "--all judged the ladder"
}

# libefab on its own (issue 60): docs/example/lib_write.c, compiled with lib/
# as its only include path and linked with libefab.a alone, opens a fabric,
# registers a buffer, times one write and checks what landed; every lib/
# header compiles alone in C (and C++ where there is a compiler).
t_layers_lib_alone() {
	[ -x "$BUILD/example/lib_write" ] || die "$BUILD/example/lib_write not built (make tests builds it)"
	expect_rc 0 timeout 60 "$BUILD/example/lib_write" -p tcp -s 65536
	grep -q "^lib_write: tcp.* 65536 B from host memory: one write [0-9.]* us (post to completion, .* clock), data checked$" \
		"$WORK/last.out" || die "no checked write"
	expect_rc 0 timeout 60 "$BUILD/example/lib_write" -p shm -s 8
	# GPU memory where there is none: a skip that says why, never a crash
	expect_rc 77 timeout 60 "$BUILD/example/lib_write" -p tcp -m cuda
	[ -s "$WORK/last.err" ] || die "-m cuda skipped without a reason"
	# the example uses nothing of bench/: no bench/ header, no bench/ symbol
	! grep -n '#include "' docs/example/lib_write.c | grep -v '"efab[a-z_]*\.h"' || die "a non-lib include"
	local h
	for h in $(grep -o '"efab[a-z_]*\.h"' docs/example/lib_write.c | tr -d '"'); do
		[ -f "lib/$h" ] || die "the example includes $h, which is not lib/'s"
	done
	expect_rc 0 make -s --no-print-directory BUILD="$BUILD" headers-check
	grep -q "every lib/ header compiles alone" "$WORK/last.out" || die "headers-check said nothing"
}

# Each executable links its own family (issue 60): the mains hand their family
# to the harness and the engine and families are an archive, so a binary
# carries only what its main reaches.
t_layers_binaries_link_their_family() {
	local b fams
	for b in put_lat put_bw get_lat get_bw atomic_lat atomic_bw connect scan; do
		fams=$(nm "$BIN/efab_$b" | awk '$3 ~ /^efab_family_/ { print $3 }' | sort | tr '\n' ' ')
		case $b in
		put_* | get_*) [ "$fams" = "efab_family_rma " ] || die "efab_$b links families: $fams" ;;
		atomic_*) [ "$fams" = "efab_family_atomic " ] || die "efab_$b links families: $fams" ;;
		connect) [ "$fams" = "efab_family_connect " ] || die "efab_$b links families: $fams" ;;
		scan) [ "$fams" = "efab_family_rma efab_family_scan " ] || die "efab_$b links families: $fams" ;;
		esac
	done
	# efab_put_lat: no scan verdict, no atomic value model, no connect family,
	# no NVSHMEM knob scan (its GPU initiator stays: --initiator gpu)
	nm "$BIN/efab_put_lat" >"$WORK/nm"
	! grep -E ' [Tt] (efab_scan_|efab_atomic_(word|init|operand|expected|final)|efab_connect|connect_|efab_nv_)' "$WORK/nm" ||
		die "efab_put_lat links another family's code"
	grep -q ' T efab_gda_' "$WORK/nm" || die "efab_put_lat lost its GPU initiator"
	nm "$BIN/efab_scan" | grep -q ' T efab_scan_verdict\| T efab_scan_' || die "efab_scan has no verdict code"
}
