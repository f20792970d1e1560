# make format-check: lines changed since FORMAT_BASE follow .clang-format
# (Makefile says why lines and not whole files). Needs clang-format and
# git clang-format (Debian package clang-format) and a clone that has
# FORMAT_BASE; skipped (77) without them.

format_need() {
	command -v clang-format >/dev/null 2>&1 && command -v git-clang-format >/dev/null 2>&1 ||
		{ echo "no clang-format / git clang-format here (Debian package clang-format)"; exit 77; }
	git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
	local base
	base=$(sed -n 's/^FORMAT_BASE ?= *//p' Makefile)
	[ -n "$base" ] || die "no FORMAT_BASE in the Makefile"
	git cat-file -e "$base^{commit}" 2>/dev/null ||
		{ echo "FORMAT_BASE $base is not in this clone (shallow?)"; exit 77; }
}

# The tree as it is, uncommitted edits included.
t_format_check() {
	format_need
	timeout 60 make -s --no-print-directory format-check >"$WORK/fmt.out" 2>&1 ||
		{ cat "$WORK/fmt.out"; die "make format-check failed on the tree"; }
	grep -q "^format-check: lines changed since .* follow .clang-format" "$WORK/fmt.out" ||
		{ cat "$WORK/fmt.out"; die "no summary line"; }
}

# A scratch clone with one file badly formatted: format-check fails and
# prints the diff, make format rewrites the bad lines, then it passes.
t_format_check_fails_on_bad_file() {
	format_need
	local c=$WORK/fmt-clone f=lib/efab.h
	git clone -q --shared . "$c" || die "git clone"
	cp Makefile .clang-format "$c/" # the working tree's, committed or not
	printf '%s\n' 'static inline int  efab_fmt_probe( int a ){ if(a) return a*2;' '  return 0; }' >>"$c/$f"
	local rc=0
	(cd "$c" && timeout 60 make -s --no-print-directory format-check) >"$WORK/fmt-bad.out" 2>&1 || rc=$?
	cat "$WORK/fmt-bad.out"
	[ $rc != 0 ] || die "format-check passed a badly formatted $f"
	grep -q "^format-check: the lines above differ from .clang-format's style" "$WORK/fmt-bad.out" ||
		die "format-check failed for another reason than the style"
	grep -q "^--- a/$f" "$WORK/fmt-bad.out" || die "no diff of $f"
	grep -q '^-static inline int  efab_fmt_probe( int a ){ if(a) return a\*2;' "$WORK/fmt-bad.out" ||
		die "the bad line is not in the diff"
	grep -q '^+static inline int efab_fmt_probe(int a)$' "$WORK/fmt-bad.out" ||
		die "the formatted line is not in the diff"
	[ "$(grep -c '^[-+][^-+]' "$WORK/fmt-bad.out")" -le 12 ] || die "the diff reaches beyond the bad lines"
	(cd "$c" && timeout 60 make -s --no-print-directory format) || die "make format failed"
	grep -q '^	if (a)$' "$c/$f" || die "make format did not rewrite $f"
	(cd "$c" && timeout 60 make -s --no-print-directory format-check) >"$WORK/fmt-fixed.out" 2>&1 ||
		{ cat "$WORK/fmt-fixed.out"; die "format-check still fails after make format"; }
	(cd "$c" && git diff --stat -- "$f" | grep -q '1 file changed') || die "make format touched more than $f"
	[ -z "$(cd "$c" && git status --short -- lib bench tests | grep -v " $f\$")" ] ||
		die "make format changed other files"
}
