#!/usr/bin/env python3
"""Every command shown in README.md and docs/*.md still works as written, as far
as it can be checked on this machine, and every relative link resolves.

  tests/doccmds.py [--root DIR] [--bin DIR] [--list] [--no-links] [FILE.md ...]

Commands are the lines of fenced code blocks tagged `sh` (a backslash joins
lines; `#` starts a comment; `NAME=VALUE` lines define variables that `$NAME`
expands later in the same block); every fenced block must carry a language tag
(sh, text, ini, ...), so that no command hides in an untagged block. Inline code
spans in the prose that start with an efabench executable are checked for their
option names. Launchers are peeled off (mpirun and its options, srun, timeout,
tests/efasim/run V, tests/cluster/mpirun, tests/cluster/slurm run, NAME=VALUE
environment words), then the program is checked:

  build/bin/efab_X, efab_X   the executable exists (a main in bench/ or the
                             Makefile's NVSHMEM binaries); every option is one
                             of its `--help` (efab_shmem_seed: its getopt table);
                             the values: a benchmark row through
                             `efab_sweep --dry-run` (the same option table,
                             no fabric, no MPI), efab_scan run as one process
                             (it must get past the option parser to its ranks
                             rule), efab_sweep CONFIG with --dry-run added
  plot/*, bench/tools/*      the file exists; options from its --help; a value
                             of an option with choices is one of them
  make [VAR=V] [TARGET]      each target is a rule of the Makefile, each VAR
                             is named in it
  tests/..., .ci/...         the file exists and is executable; each option
                             appears in it; tests/run FILTER matches a test;
                             .ci/fresh-root's arguments are commands, checked
  apt-get, git, ...          outside efabench: listed, not checked

A command needing EFA hardware or several nodes is never run: its options are
checked as above. `<word>` in a command is a placeholder (never checked as a
value). Exit 0 when everything passed, 1 otherwise (each failure on one line:
FILE:LINE: what).
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r'^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$')
PLACEHOLDER = re.compile(r'<([A-Za-z][^<>\n]*)>')
EXTERNAL = {'apt-get', 'apt', 'pip', 'pip3', 'git', 'cd', 'export', 'echo', 'cat', 'ls', 'lstopo',
            'strace', 'tc', 'ip', 'sudo', 'debootstrap', 'env', 'sh', 'bash', 'grep', 'cp', 'mkdir'}
# mpirun (Open MPI) and srun options that take a value as the next word
MPIRUN_ARG = {'-np', '-n', '-N', '-H', '--host', '-host', '--map-by', '-x', '--bind-to', '--rank-by',
              '-hostfile', '--hostfile', '-machinefile', '--npernode', '-npernode', '--report-bindings-file'}
MPIRUN_ARG2 = {'--mca', '-mca'}
SRUN_ARG = {'-N', '-n', '-p', '-w', '-t', '-c', '--nodes', '--ntasks', '--ntasks-per-node', '--partition',
            '--gpus-per-node', '--mpi', '--export', '--nodelist', '--time', '--cpus-per-task'}
# keys efab_sweep sets itself (one CSV per benchmark, its own nodes JSON)
SWEEP_OWNS = {'csv', 'nodes-json'}


class Checker:
    def __init__(self, root, bindir):
        self.root = os.path.abspath(root)
        self.bin = os.path.abspath(bindir)
        self.fail = []
        self.log = []
        self.tmp = tempfile.mkdtemp(prefix='doccmds.')
        self.helps = {}
        self.makefile = open(os.path.join(self.root, 'Makefile')).read()
        self.targets = self._make_targets()
        self.efasim_versions = (re.search(r'^EFASIM_VERSIONS \?= (.*)$', self.makefile, re.M)
                                or re.search('(x)', 'x')).group(1).split()
        # the benchmark rows (efab_sweep's `bench` key: the name without efab_)
        self.rows = {n: n[5:] for n in re.findall(r'\.name = "(efab_\w+)"',
                                                   open(os.path.join(self.root, 'bench/engine/rows.c')).read())}
        execs = {os.path.basename(p)[:-2] for p in glob.glob(os.path.join(self.root, 'bench/efab_*.c'))}
        execs |= set(re.findall(r'\$\(BUILD\)/bin/(efab_\w+):', self.makefile))
        self.execs = execs
        self.tests = self._test_names()
        # the option table's options (long: takes a value) and short ones, from every built executable
        self.longs, self.short = {}, {}
        for e in sorted(execs):
            spec = self.spec(e) if e in self.rows else None
            if spec:
                for k, v in spec[0].items():
                    self.longs[k] = self.longs.get(k, False) or v
                self.short.update(spec[1])

    # ---- sources of truth ----
    def _make_targets(self):
        t = set()
        for m in re.finditer(r'^([A-Za-z0-9_.-]+(?:[ \t]+[A-Za-z0-9_.-]+)*)[ \t]*:(?!=)', self.makefile, re.M):
            t.update(m.group(1).split())
        for m in re.finditer(r'^\.PHONY:(.*)$', self.makefile, re.M):
            t.update(m.group(1).split())
        return t

    def _test_names(self):
        names = set()
        for f in glob.glob(os.path.join(self.root, 'tests/integration/*.sh')):
            names.update(re.findall(r'^(t_\w+)\s*\(\)', open(f).read(), re.M))
        for f in glob.glob(os.path.join(self.root, 'tests/unit/test_*.c')):
            names.add(os.path.basename(f)[:-2])
        return names

    def help_text(self, argv):
        key = tuple(argv)
        if key not in self.helps:
            try:
                p = subprocess.run(argv + ['--help'], capture_output=True, text=True, timeout=60,
                                   cwd=self.root)
                self.helps[key] = p.stdout + p.stderr if p.returncode == 0 else None
            except (OSError, subprocess.TimeoutExpired):
                self.helps[key] = None
        return self.helps[key]

    def spec(self, exe, mode=None):
        """({long: takes_value}, {short: long}) of an efabench executable, or None."""
        if exe == 'efab_shmem_seed':
            src = open(os.path.join(self.root, 'bench/ops/shmem_seed.cc')).read()
            longs = {n: a == 'required' for n, a in re.findall(r'\{"([\w-]+)", (\w+)_argument', src)}
            opts = re.search(r'getopt_long\(argc, argv, "([^"]*)"', src).group(1)
            short = {}
            for n, a in re.findall(r'\{"([\w-]+)", \w+_argument, 0, \'(\w)\'\}', src):
                short[a] = n
            return longs, short
        path = os.path.join(self.bin, exe)
        if not os.access(path, os.X_OK):
            return None
        text = self.help_text([path] + ([mode] if mode else []))
        if text is None:
            return None
        longs, short = {}, {}
        for m in re.finditer(r'^\s+(?:-(\w), )?--([a-z0-9-]+)(?: (\S+))?(?=\s{2,}|\s*$|,)', text, re.M):
            longs[m.group(2)] = bool(m.group(3))
            if m.group(1):
                short[m.group(1)] = m.group(2)
        for m in re.finditer(r'(?<![\w-])--([a-z0-9][a-z0-9-]*)', text):
            longs.setdefault(m.group(1), False)
        for m in re.finditer(r'(?<![\w-])-(\w), --([a-z0-9-]+)', text):
            short.setdefault(m.group(1), m.group(2))
        return longs, short

    def argparse_spec(self, argv):
        text = self.help_text(argv)
        if text is None:
            return None
        longs, short, choices = {}, {}, {}
        for m in re.finditer(r'(?<![\w-])(--?[A-Za-z][\w-]*)(?:[ =](\{[^}]*\}|[A-Z][A-Z_:]*))?', text):
            name, arg = m.group(1), m.group(2)
            takes = bool(arg)
            if name.startswith('--'):
                longs[name[2:]] = longs.get(name[2:], False) or takes
            else:
                short[name[1:]] = takes
            if arg and arg.startswith('{'):
                choices[name] = arg[1:-1].split(',')
        # "-o OUT, --out OUT": the short one's long name
        for m in re.finditer(r'(?<![\w-])-(\w)(?: [A-Z_]+)?, --([\w-]+)', text):
            short[m.group(1)] = m.group(2)
        return longs, short, choices

    # ---- reporting ----
    def ok(self, where, what):
        self.log.append(f'ok    {where}: {what}')

    def bad(self, where, what):
        self.fail.append(f'{where}: {what}')
        self.log.append(f'FAIL  {where}: {what}')

    # ---- command lines ----
    def command(self, where, words, inline=False):
        words = list(words)
        while words and re.match(r'^[A-Za-z_]\w*=', words[0]):
            words.pop(0)
        if not words:
            return
        prog = words[0]
        prog = TOOLS.get(prog, prog)  # efab_plot named without its folder
        base = os.path.basename(prog)
        if inline and len(words) == 1 and '/' in prog:
            return self.path(where, prog)
        if inline and is_placeholder(prog):
            return self.ok(where, f'{prog}: a placeholder')
        rest = words[1:]
        text = ' '.join(words)
        if base in ('mpirun', 'mpiexec') and not prog.startswith('tests/'):
            return self.launcher(where, rest, MPIRUN_ARG, MPIRUN_ARG2, inline)
        if prog == 'srun':
            return self.launcher(where, rest, SRUN_ARG, set(), inline)
        if prog == 'timeout':
            while rest and rest[0].startswith('-'):
                rest = rest[2:] if rest[0] in ('-k', '-s') else rest[1:]
            return self.command(where, rest[1:], inline)
        if prog == 'python3' and rest and not rest[0].startswith('-'):
            return self.command(where, rest, inline)
        if re.match(r'^(\S*/)?efab_\w+$', prog) and not prog.startswith(('plot/', 'bench/tools/')):
            return self.efab(where, prog, rest, inline)
        if prog == 'make':
            return self.make(where, rest)
        if prog.startswith(('plot/', 'bench/tools/', 'tests/', '.ci/')):
            return self.script(where, prog, rest, inline)
        if base in EXTERNAL:
            self.ok(where, f'{text[:60]}: outside efabench, not checked')
            return
        self.bad(where, f'unknown command {prog!r} (an efabench executable, make, a script of the tree, '
                        f'or add it to tests/doccmds.py\'s EXTERNAL)')

    def launcher(self, where, rest, arg1, arg2, inline):
        i = 0
        while i < len(rest) and rest[i].startswith('-'):
            w = rest[i]
            i += 3 if w in arg2 else 2 if (w in arg1 and '=' not in w) else 1
        if i >= len(rest):
            if not inline:
                self.bad(where, 'launcher without a program')
            return
        self.command(where, rest[i:], inline)

    def efab(self, where, prog, args, inline):
        exe = os.path.basename(prog)
        d = os.path.dirname(prog)
        if exe not in self.execs:
            return self.bad(where, f'{prog}: no such executable (no bench/{exe}.c, not in the Makefile)')
        m = re.match(r'^(?:\$?\w*/)?build-efasim/lf-([\d.]+)/efab/bin$', d)
        if d and d not in ('build/bin', 'build-san/bin', '$ABIN') and not m:
            return self.bad(where, f'{prog}: efabench executables are in build/bin (or build-efasim/lf-V/efab/bin)')
        if m and m.group(1) not in self.efasim_versions:
            return self.bad(where, f'{prog}: libfabric {m.group(1)} is not one of EFASIM_VERSIONS {self.efasim_versions}')
        mode = '--diff' if exe == 'efab_probe' and '--diff' in args else None
        spec = self.spec(exe, mode)
        if spec is None and exe in self.rows:
            spec = (self.longs, self.short)  # not built here (NVSHMEM): names through efab_sweep
            names_by = 'efab_sweep'
        else:
            names_by = f'{exe} --help' if exe != 'efab_shmem_seed' else 'its getopt table'
        if spec is None:
            return self.bad(where, f'{exe}: not built in {self.bin} (make -j1 all)')
        longs, short = spec
        opts, pos, err = parse_opts(args, longs, short, inline, strict=names_by != 'efab_sweep')
        if err:
            return self.bad(where, f'{exe}: {err} (options from {names_by})')
        what = [f'options {names_by}']
        if inline:
            return self.ok(where, f'{exe}: {len(opts)} option names ({what[0]})')
        if exe == 'efab_sweep':
            return self.sweep_cmd(where, exe, opts, pos)
        if mode or exe in ('efab_topo', 'efab_shmem_seed'):
            return self.ok(where, f'{exe}: {len(opts)} options, names only ({what[0]})')
        if exe == 'efab_scan':
            return self.scan_cmd(where, args)
        if exe in self.rows:
            return self.values_by_sweep(where, exe, opts)
        self.ok(where, f'{exe}: names only')

    def values_by_sweep(self, where, exe, opts):
        lines = ['# doccmds: one job, the command\'s options as keys', '[job]',
                 f'bench = {self.rows[exe]}', 'launcher = none']
        skipped = []
        for name, val in opts:
            if name in SWEEP_OWNS or name in ('help', 'version'):
                skipped.append(name)
                continue
            if val is not None and ('_PH_' in val or '$' in val):
                skipped.append(name)
                continue
            lines.append(f'{name} = {"true" if val is None else val}')
        cfg = os.path.join(self.tmp, 'job.conf')
        open(cfg, 'w').write('\n'.join(lines) + '\n')
        p = subprocess.run([os.path.join(self.bin, 'efab_sweep'), cfg, '--dry-run', '-o', self.tmp],
                           capture_output=True, text=True, timeout=60, cwd=self.tmp)
        if p.returncode != 0:
            msg = (p.stderr.strip().splitlines() or ['?'])[-1]
            return self.bad(where, f'{exe}: efab_sweep --dry-run refuses its options: {msg}')
        self.ok(where, f'{exe}: {len(opts)} options, values accepted by the option table '
                       f'(efab_sweep --dry-run){"; not as keys: " + " ".join(skipped) if skipped else ""}')

    def scan_cmd(self, where, args):
        args = [a for a in args if '_PH_' not in a and '$' not in a]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
        p = subprocess.run([os.path.join(self.bin, 'efab_scan')] + args, capture_output=True, text=True,
                           timeout=120, cwd=self.tmp, env=env)
        if p.returncode == 2 and 'needs at least 2 ranks' in p.stderr:
            return self.ok(where, 'efab_scan: options parsed by efab_scan itself (one process: it stops at '
                                  'its ranks rule)')
        msg = (p.stderr.strip().splitlines() or ['?'])[-1]
        self.bad(where, f'efab_scan: exit {p.returncode}: {msg}')

    def sweep_cmd(self, where, exe, opts, pos):
        names = [n for n, _ in opts]
        if len(pos) != 1:
            return self.bad(where, f'efab_sweep takes one CONFIG, got {pos}')
        cfg = pos[0]
        if '_PH_' in cfg or cfg.upper() == cfg:
            return self.ok(where, 'efab_sweep: option names (its CONFIG is a placeholder)')
        if not os.path.isfile(os.path.join(self.root, cfg)):
            return self.bad(where, f'efab_sweep: no config {cfg}')
        if 'resume' in names:
            return self.ok(where, 'efab_sweep: option names (--resume needs a run)')
        argv = [os.path.join(self.bin, 'efab_sweep'), os.path.join(self.root, cfg)]
        for n, v in opts:
            if n in ('output', 'dry-run'):
                continue
            argv += [f'--{n}'] + ([] if v is None else [v])
        argv += ['--dry-run', '-o', self.tmp]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=self.root)
        if p.returncode != 0:
            msg = (p.stderr.strip().splitlines() or ['?'])[-1]
            return self.bad(where, f'efab_sweep {cfg} --dry-run: exit {p.returncode}: {msg}')
        self.ok(where, f'efab_sweep {cfg}: plans with --dry-run')

    def make(self, where, args):
        bad = []
        targets = []
        for a in args:
            if '=' in a:
                var = a.split('=', 1)[0]
                if not re.search(r'\b' + re.escape(var) + r'\b', self.makefile):
                    bad.append(f'variable {var} is not used by the Makefile')
            elif a.startswith('-'):
                if a not in ('-j1', '-j', '-k', '-n', '-s') and not re.match(r'^-j\d+$', a):
                    bad.append(f'option {a} not expected')
            else:
                targets.append(a)
                if a not in self.targets:
                    bad.append(f'no target {a!r} in the Makefile')
        if bad:
            return self.bad(where, 'make: ' + '; '.join(bad))
        self.ok(where, f'make {" ".join(targets) or "(all)"}: targets and variables in the Makefile')

    def path(self, where, prog):
        """A path named in the prose: it exists (a glob matches; a built program: its source)."""
        p = os.path.join(self.root, prog)
        if glob.glob(p) or glob.glob(p + '.c') or os.path.isdir(p):
            return self.ok(where, f'{prog}: exists')
        self.bad(where, f'{prog}: no such file or folder')

    def script(self, where, prog, args, inline):
        path = os.path.join(self.root, prog)
        if not os.path.isfile(path):
            return self.bad(where, f'{prog}: no such file')
        if not os.access(path, os.X_OK) and not prog.endswith('.py'):
            return self.bad(where, f'{prog}: not executable')
        if prog == '.ci/fresh-root':
            for a in args:
                if not a.startswith('-'):
                    self.command(where, shlex.split(a), inline)
            return self.ok(where, f'{prog}: exists; its arguments checked as commands')
        if prog == 'tests/efasim/run':
            if not args:
                return self.ok(where, f'{prog}: exists') if inline else self.bad(where, f'{prog}: no version')
            v = args[0]
            if v not in self.efasim_versions and v != 'V':
                return self.bad(where, f'{prog}: {v} is not one of EFASIM_VERSIONS {self.efasim_versions}')
            self.ok(where, f'{prog} {v}: exists, a version make efasim builds')
            if len(args) > 1:
                self.command(where, args[1:], inline)
            return
        if prog == 'tests/cluster/mpirun':
            self.ok(where, f'{prog}: exists')
            return self.launcher(where, args, MPIRUN_ARG, MPIRUN_ARG2, inline)
        if prog == 'tests/cluster/slurm' and args[:1] == ['run']:
            self.ok(where, f'{prog} run: exists')
            return self.command(where, args[1:], inline)
        if prog == 'tests/run':
            f = [a for a in args if not a.startswith('-')]
            if f and not (inline and is_placeholder(f[0])) and not any(f[0] in t for t in self.tests):
                return self.bad(where, f'tests/run {f[0]}: no test name contains {f[0]!r}')
            return self.ok(where, f'tests/run {" ".join(f)}: matches a test')
        if prog.startswith(('plot/', 'bench/tools/')) or (prog.startswith('tests/') and prog.endswith('.py')):
            argv = [sys.executable, path] if open(path).readline().startswith('#!/usr/bin/env python') else [path]
            spec = self.argparse_spec(argv)
            if spec is None and prog.startswith('tests/'):
                return self.source_opts(where, prog, path, args)  # no --help: its own argv parsing
            if spec is None:
                return self.bad(where, f'{prog}: --help failed')
            longs, short, choices = spec
            for i, a in enumerate(args):
                if a == '--':
                    break
                name = a.split('=', 1)[0]
                if a.startswith('--'):
                    if name[2:] not in longs:
                        return self.bad(where, f'{prog}: unknown option {name} (not in its --help)')
                elif a.startswith('-') and len(a) > 1 and not a[1].isdigit():
                    if a[1:2] not in short:
                        return self.bad(where, f'{prog}: unknown option {a} (not in its --help)')
                if name in choices and not inline:
                    v = a.split('=', 1)[1] if '=' in a else (args[i + 1] if i + 1 < len(args) else '')
                    if v not in choices[name] and '_PH_' not in v:
                        return self.bad(where, f'{prog}: {name} {v!r} is not one of {choices[name]}')
            return self.ok(where, f'{prog}: options in its --help')
        return self.source_opts(where, prog, path, args)

    def source_opts(self, where, prog, path, args):
        """A script of the tree: each option must be one it handles (named in it)."""
        src = open(path, errors='replace').read()
        for a in args:
            if a == '--':
                break
            if re.match(r'^--?[A-Za-z][\w-]*', a):
                name = re.match(r'^--?[A-Za-z][\w-]*', a).group(0)
                if not re.search(r'(?<![\w-])' + re.escape(name) + r'(?![\w-])', src):
                    return self.bad(where, f'{prog}: option {name} does not appear in {prog}')
        self.ok(where, f'{prog}: exists; its options appear in it')


TOOLS = {'efab_plot': 'plot/efab_plot', 'efab_scan_heatmap': 'plot/efab_scan_heatmap',
         'efab_sidebyside': 'bench/tools/efab_sidebyside'}


def is_placeholder(word):
    """FILE, CMD, RUN, V, _PH_x (<x>): a word that stands for one."""
    return word.startswith('_PH_') or bool(re.match(r'^[A-Z][A-Z0-9_:]*(\.\.\.)?$', word))


def parse_opts(args, longs, short, inline, strict=True):
    """[(long name, value or None)], positionals, error."""
    opts, pos = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a == '--':
            pos += args[i + 1:]
            break
        if a.startswith('--'):
            name, eq, val = a[2:].partition('=')
            if strict and name not in longs:
                return opts, pos, f'unknown option --{name}'
            if longs.get(name) and not eq:
                if i + 1 >= len(args):
                    if inline:
                        val = None
                    else:
                        return opts, pos, f'--{name} needs a value'
                else:
                    i += 1
                    val = args[i]
            opts.append((name, val if (eq or longs.get(name)) else None))
        elif a.startswith('-') and len(a) > 1 and not a[1].isdigit():
            j = 1
            while j < len(a):
                s = a[j]
                if s not in short:
                    return opts, pos, f'unknown option -{s}'
                name = short[s]
                if longs.get(name):
                    val = a[j + 1:]
                    if not val:
                        if i + 1 < len(args):
                            i += 1
                            val = args[i]
                        elif not inline:
                            return opts, pos, f'-{s} needs a value'
                    opts.append((name, val or None))
                    break
                opts.append((name, None))
                j += 1
        else:
            pos.append(a)
        i += 1
    return opts, pos, None


# ---- markdown ----
def code_blocks(path):
    """(line, lang, [lines]) of each fenced block; untagged fences reported."""
    blocks, cur = [], None
    for n, l in enumerate(open(path).read().split('\n'), 1):
        m = FENCE.match(l)
        if cur is None and m:
            cur = (n, m.group(3), m.group(2), [])
        elif cur is not None and l.strip() == cur[2]:
            blocks.append((cur[0], cur[1], cur[3]))
            cur = None
        elif cur is not None:
            cur[3].append((n, l))
    return blocks


def shell_commands(lines):
    """(line number, words) per simple command of an sh block."""
    out, env = [], {}
    joined, start = '', None
    for n, l in lines:
        if start is None:
            start = n
        if l.rstrip().endswith('\\'):
            joined += l.rstrip()[:-1] + ' '
            continue
        joined += l
        text = PLACEHOLDER.sub(lambda m: '_PH_' + re.sub(r'\W', '_', m.group(1)), joined)
        joined, ln, start = '', start, None
        try:
            lex = shlex.shlex(text, posix=True, punctuation_chars=';&|<>')
            lex.commenters = '#'
            lex.whitespace_split = True
            toks = list(lex)
        except ValueError as e:
            out.append((ln, None, f'cannot split: {e}'))
            continue
        cmd = []
        skip = False
        for t in toks + [';']:
            if skip:
                skip = False
                continue
            if t in (';', '&&', '||', '|', '&'):
                if cmd:
                    if len(cmd) == 1 and re.match(r'^[A-Za-z_]\w*=', cmd[0]):
                        k, v = cmd[0].split('=', 1)
                        env[k] = v
                    else:
                        out.append((ln, cmd, None))
                cmd = []
            elif t in ('>', '>>', '<', '2>', '>&', '2>&1'):
                skip = True
            elif t.startswith('$') and t[1:] in env:
                cmd += shlex.split(env[t[1:]])
            else:
                cmd.append(t)
    return out


def inline_spans(path, execs):
    """(line, text) of inline code spans outside fences that start with an efabench command."""
    text = open(path).read()
    lines = text.split('\n')
    infence = False
    keep = []
    for l in lines:
        if FENCE.match(l):
            infence = not infence
            keep.append('')
        else:
            keep.append('' if infence else l)
    prose = '\n'.join(keep)
    for m in re.finditer(r'(?<!`)`([^`\n]+(?:\n[^`\n]+)?)`(?!`)', prose):
        span = ' '.join(m.group(1).split())
        first = span.split(' ')[0] if span else ''
        base = os.path.basename(first)
        starts = first in TOOLS or (base in execs and (first == base or first.startswith(('build/bin/', 'build-efasim/'))
                                     or first.startswith('$'))) \
            or first.startswith(('build/bin/', 'plot/', 'bench/tools/', 'tests/', '.ci/')) \
            or (first == 'make' and len(span.split()) > 1)
        if re.match(r'^efab_\w+$', first) and ' -' in span and base not in execs:
            starts = True  # an unknown executable with options: must fail
        if not starts:
            continue
        yield prose.count('\n', 0, m.start()) + 1, span


def synopsis_words(span):
    """The words of a synopsis: brackets, alternatives and ellipses removed."""
    span = PLACEHOLDER.sub(lambda m: '_PH_' + re.sub(r'\W', '_', m.group(1)), span)
    span = re.sub(r'[\[\]]', ' ', span).replace('...', ' ').replace('…', ' ')
    try:
        raw = shlex.split(span)
    except ValueError:
        raw = span.split()
    words = []
    for w in raw:
        if '|' in w and w.startswith('-'):
            words.append(w.split('|')[0])
        else:
            words.append(w.split('|')[0] if '|' in w else w)
    return words


def slug(heading):
    h = heading.strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')


def anchors(path):
    out, infence = set(), False
    for l in open(path).read().split('\n'):
        if FENCE.match(l):
            infence = not infence
        elif not infence and re.match(r'^#{1,6} ', l):
            out.add(slug(l.lstrip('#')))
    return out


def check_links(chk, files):
    for f in files:
        rel = os.path.relpath(f, chk.root)
        infence = False
        for n, l in enumerate(open(f).read().split('\n'), 1):
            if FENCE.match(l):
                infence = not infence
                continue
            if infence:
                continue
            for m in re.finditer(r'\]\(([^)\s]+)\)', l):
                target = m.group(1)
                if re.match(r'^[a-z]+:', target):
                    continue
                path, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
                where = f'{rel}:{n}'
                if not os.path.exists(dest):
                    chk.bad(where, f'link {target}: {os.path.relpath(dest, chk.root)} does not exist')
                elif frag and (not dest.endswith('.md') or frag not in anchors(dest)):
                    chk.bad(where, f'link {target}: no heading #{frag} in {os.path.relpath(dest, chk.root)}')
                else:
                    chk.ok(where, f'link {target}')
    # every docs file is reachable from the front door
    readme = os.path.join(chk.root, 'README.md')
    if readme in files:
        text = open(readme).read()
        for d in sorted(glob.glob(os.path.join(chk.root, 'docs/*.md'))):
            name = 'docs/' + os.path.basename(d)
            if f']({name}' not in text:
                chk.bad('README.md', f'{name} is not linked from README.md')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('files', nargs='*', help='markdown files (default README.md docs/*.md)')
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('--bin', default=None, help='built executables (default ROOT/build/bin)')
    ap.add_argument('--list', action='store_true', help='print every check, not only failures')
    ap.add_argument('--no-links', action='store_true')
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    chk = Checker(root, a.bin or os.path.join(root, 'build/bin'))
    files = [os.path.abspath(f) for f in a.files] or \
        [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs/*.md')))
    ncmd = 0
    for f in files:
        rel = os.path.relpath(f, root)
        for start, lang, lines in code_blocks(f):
            if not lang:
                chk.bad(f'{rel}:{start}', 'a fenced block without a language (sh for commands, text for output)')
                continue
            if lang not in ('sh', 'bash', 'shell'):
                continue
            for n, words, err in shell_commands(lines):
                ncmd += 1
                if err:
                    chk.bad(f'{rel}:{n}', err)
                else:
                    chk.command(f'{rel}:{n}', words)
        for n, span in inline_spans(f, chk.execs):
            ncmd += 1
            chk.command(f'{rel}:{n}', synopsis_words(span), inline=True)
    if not a.no_links:
        check_links(chk, files)
    for l in chk.log:
        if a.list or l.startswith('FAIL'):
            print(l)
    print(f'doccmds: {ncmd} commands in {len(files)} files, {len(chk.fail)} failures')
    return 1 if chk.fail else 0


if __name__ == '__main__':
    sys.exit(main())
