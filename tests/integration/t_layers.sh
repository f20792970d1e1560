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
