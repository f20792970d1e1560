# efab_plot's package (plot/efabplot), module by module (issue 36): the
# package's shape -- no import cycle, no module over 500 lines, no unused
# package import, every module with its test file (tests/plot_imports.py) --
# and a test function per tests/plot/test_NAME.py (stdlib unittest on inputs
# built in the test: rows, result directories, a stand-in efab_probe).

t_plot_imports() {
	python3 tests/plot_imports.py --tests tests/plot plot/efabplot || die "plot_imports"
}

plot_unit() { # tests/plot/test_NAME.py
	timeout -k 5 300 python3 "$1" -v || die "$1 failed"
}

# t_plot_unit_NAME for every tests/plot/test_NAME.py: a new test file is run
# without a line here
for _f in tests/plot/test_*.py; do
	_n=$(basename "$_f" .py)
	eval "t_plot_unit_${_n#test_}() { plot_unit $_f; }"
done
unset _f _n
