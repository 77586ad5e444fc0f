#!/usr/bin/env python3
"""Runs public crates' loom suites, unchanged, under loom 0.7 and under fgvt-loom, side by side.

Each suite is a crate from crates.io at a pinned version (`SUITES` below, with the flags, the
features and the environment its own CI runs its loom tests with). For each, the script:

1. fetches the crate with cargo (a scratch package that depends on `=version`), and copies its
   sources twice under the work directory: one as published (loom 0.7), one whose `loom`
   dependency is renamed to fgvt-loom (`package = "fgvt-loom", path = ...`), the one-line
   switch a user makes;
2. builds both test targets in release, with `--cfg loom` (and the crate's own cfg);
3. runs every test of the target alone in each build (`--exact`), timing the whole process,
   with the crate CI's environment (`LOOM_MAX_PREEMPTIONS`) and `FGVT_STATS=1`, which makes
   fgvt print the states and runs of each model; `--rounds N` times (3 by default), the two
   tools alternating, the median of each standing;
4. prints one Markdown table: per test, both verdicts, both times, fgvt's CPU time (it explores
   on every core), its states and runs, and the totals; `--out FILE` writes it there too.

With `--history`, it runs instead the bugs of `HISTORY`: a version of a crate with a bug that
a loom test caught, and the version that fixed it. The test, which came with the fix, is copied
over the buggy version's tests (as the crate's own history did before merging the fix); each
version runs under loom and under fgvt, and fgvt's report of the buggy one is printed, to be
compared with the lines the fix changed.

Usage: benches/loom-suites/run.py [--work DIR] [--timeout SECONDS] [--rounds N] [--out FILE]
       [--history] [suite ...]
Nothing here is part of the test suite: it needs the network (crates.io) and minutes.
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# name: version, test target, cargo features, the `--cfg` flags (loom's, or the crate's own:
# oneshot's `oneshot_loom` keeps `--cfg loom` from reaching its dependencies), environment (the
# crate's CI).
SUITES = {
    "concurrent-queue": dict(version="2.5.0", test="loom", features="loom", cfg=["loom"],
                             env={"LOOM_MAX_PREEMPTIONS": "2"}),
    "left-right": dict(version="0.11.8", test="loom", features="", cfg=["loom"], env={}),
    "oneshot": dict(version="0.1.13", test="loom", features="loom", cfg=["oneshot_loom"],
                    env={"LOOM_MAX_PREEMPTIONS": "2"}),
    # Its loom reaches it through another crate too (`parking`), which renaming its own
    # dependency does not reach: the whole build's `loom` is patched to a shim instead.
    "event-listener": dict(version="5.4.2", test="loom", features="loom", cfg=["loom"],
                           env={"LOOM_MAX_PREEMPTIONS": "4"}, patch=True),
}

# Bugs a loom test caught: the buggy and the fixed version, the test (from the fixed version's
# test file, copied over the buggy one's), and the flags of the crate's CI, as for `SUITES`.
HISTORY = {
    # `Receiver::drop` met the transient UNPARKING state (a sender waking the receiver) and hit
    # `unreachable!()`: faern/oneshot#60, with the loom test of #62. The fix adds an
    # `UNPARKING` arm to the `match` of `Receiver::drop` (src/lib.rs, 0.1.10 line 1053).
    "oneshot": dict(buggy="0.1.10", fixed="0.1.11", test="loom", features="loom",
                    cfg=["oneshot_loom"], env={"LOOM_MAX_BRANCHES": "100000"},
                    case="poll_then_drop_receiver_during_send"),
}


def run(cmd, cwd, env=None, timeout=None):
    """Runs `cmd`; its exit code, output and wall time."""
    code, out, took, _ = run_timed(cmd, cwd, env, timeout)
    return code, out, took


def run_timed(cmd, cwd, env=None, timeout=None):
    """Runs `cmd`; its exit code, output, wall time and CPU time (user and system, the process
    and its threads: fgvt explores on every core, loom on one)."""
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        code, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        code, out = None, e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    took = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, out, took, cpu


def fetch(name, version, work):
    """The crate's published sources, fetched by cargo into its registry cache."""
    scratch = work / f"fetch-{name}"
    (scratch / "src").mkdir(parents=True, exist_ok=True)
    (scratch / "src" / "lib.rs").write_text("")
    (scratch / "Cargo.toml").write_text(
        f'[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n'
        f'[dependencies]\n{name} = "={version}"\n[workspace]\n')
    code, out, _ = run(["cargo", "fetch"], scratch)
    if code != 0:
        sys.exit(f"cargo fetch {name} {version} failed:\n{out}")
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    for registry in (home / "registry" / "src").iterdir():
        source = registry / f"{name}-{version}"
        if source.is_dir():
            return source
    sys.exit(f"{name}-{version} is not in {home}/registry/src")


def shim(work):
    """A crate named `loom` (0.7.2) that is fgvt-loom: what `[patch.crates-io]` puts in place of
    loom for every crate of a build, those that reach loom through others included."""
    crate = work / "loom-shim"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "loom"\nversion = "0.7.2"\nedition = "2021"\n'
        '[features]\nfutures = ["inner/futures"]\ncheckpoint = []\n'
        f'[dependencies]\ninner = {{ package = "fgvt-loom", path = "{(REPO / "loom").as_posix()}" }}\n'
        '[workspace]\n')
    (crate / "src" / "lib.rs").write_text("pub use inner::*;\n")
    return crate


def switch_to_fgvt(manifest):
    """Renames every `loom` dependency of `manifest` to fgvt-loom: the user's one-line switch."""
    text = manifest.read_text()
    loom = (REPO / "loom").as_posix()
    # A published manifest writes each dependency as its own table: `[….loom]` with `version`.
    pattern = re.compile(r'(\[[^\]\n]*dependencies\.loom\]\n)version = "[^"]*"\n')
    switched, n = pattern.subn(rf'\1package = "fgvt-loom"\npath = "{loom}"\n', text)
    if n == 0:
        sys.exit(f"no loom dependency in {manifest}")
    manifest.write_text(switched)


def prepare(name, spec, work, tests_from=None, label=None):
    """Both copies of the suite: (loom's, fgvt's). With `tests_from`, a crate's sources whose
    `tests` directory replaces the suite's own; `label` names the copies (default `name`)."""
    source = fetch(name, spec["version"], work)
    copies = []
    for tool in ("loom", "fgvt"):
        copy = work / f"{label or name}-{tool}"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(source, copy)
        if tests_from:
            shutil.rmtree(copy / "tests")
            shutil.copytree(tests_from / "tests", copy / "tests")
        manifest = copy / "Cargo.toml"
        # Its own workspace: not a member of whatever encloses the work directory. A lock file
        # shipped with the crate pins versions fgvt's dependencies may not accept: both
        # builds resolve afresh.
        manifest.write_text(manifest.read_text() + "\n[workspace]\n")
        (copy / "Cargo.lock").unlink(missing_ok=True)
        if tool == "fgvt" and spec.get("patch"):
            manifest.write_text(manifest.read_text() + "\n[patch.crates-io]\n"
                                f'loom = {{ path = "{shim(work).as_posix()}" }}\n')
        elif tool == "fgvt":
            switch_to_fgvt(manifest)
        copies.append(copy)
    return copies


def build(copy, spec, target_dir):
    """The test executable of the suite's target in `copy`."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir),
               RUSTFLAGS=" ".join(f"--cfg {c}" for c in spec["cfg"]))
    cmd = ["cargo", "test", "--release", "--test", spec["test"], "--no-run",
           "--message-format=short"]
    if spec.get("no_default"):
        cmd.append("--no-default-features")
    if spec["features"]:
        cmd += ["--features", spec["features"]]
    code, out, took = run(cmd, copy, env)
    if code != 0:
        return None, out, took
    exe = re.findall(r"Executable .*\((.*)\)", out)
    return (exe[-1] if exe else None), out, took


def tests_of(exe, cwd):
    code, out, _ = run([exe, "--list"], cwd)
    return [line.split(": ")[0] for line in out.splitlines() if line.endswith(": test")]


def verdict(code, out):
    """A test's verdict from its process: a signal is a crash, not a failing test."""
    if code is None:
        return "timeout"
    if code < 0:
        return f"crash (signal {-code})"
    return "pass" if code == 0 else "fail"


def history(names, work, timeout, out):
    """Runs each bug of `HISTORY` (see the module docs) and prints a table and fgvt's report of
    the buggy version."""
    table = ["| crate | version | test | loom | loom s | fgvt | fgvt s | fgvt states |",
             "| --- | --- | --- | --- | ---: | --- | ---: | ---: |"]
    reports = []
    for name in names:
        bug = HISTORY[name]
        fixed_source = fetch(name, bug["fixed"], work)
        for version in (bug["buggy"], bug["fixed"]):
            spec = dict(bug, version=version)
            label = f"{name}-{version}"
            copies = prepare(name, spec, work, tests_from=fixed_source, label=label)
            row = [name, version, bug["case"]]
            for tool, copy in zip(("loom", "fgvt"), copies):
                exe, log, took = build(copy, spec, work / f"target-{tool}")
                if not exe:
                    sys.exit(f"{label} does not build under {tool}:\n{log[-3000:]}")
                env = dict(os.environ, **spec["env"], FGVT_STATS="1", NO_COLOR="1")
                code, log, took = run([exe, "--exact", bug["case"], "--nocapture"], copy, env,
                                      timeout)
                row += [verdict(code, log), f"{took:.2f}"]
                if tool == "fgvt":
                    states = re.findall(r"fgvt-stats: \S+ \S+ states=(\d+)", log)
                    row.append(str(sum(int(n) for n in states)))
                    if version == bug["buggy"]:
                        reports.append(f"### {label} under fgvt\n\n```text\n{log.strip()}\n```\n")
            table.append("| " + " | ".join(row) + " |")
            print(table[-1], file=sys.stderr)
    text = "\n".join(table) + "\n\n" + "\n".join(reports)
    print(text)
    if out:
        Path(out).write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*")
    parser.add_argument("--work", default="/tmp/fgvt-loom-suites")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--out")
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each test under each tool, alternating; the median stands")
    parser.add_argument("--history", action="store_true",
                        help="run the historical bugs (HISTORY) instead of the suites")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.history:
        history(args.suites or list(HISTORY), work, args.timeout, args.out)
        return
    args.suites = args.suites or list(SUITES)
    rows, totals, cpu_totals = [], {"loom": 0.0, "fgvt": 0.0}, {"loom": 0.0, "fgvt": 0.0}
    for name in args.suites:
        spec = SUITES[name]
        loom_copy, fgvt_copy = prepare(name, spec, work)
        exes = {}
        for tool, copy in (("loom", loom_copy), ("fgvt", fgvt_copy)):
            exe, out, took = build(copy, spec, work / f"target-{tool}")
            print(f"{name}: built under {tool} in {took:.0f} s" if exe else
                  f"{name}: does not build under {tool}:\n{out[-3000:]}", file=sys.stderr)
            exes[tool] = exe
        if not all(exes.values()):
            rows.append((name, "(does not build)", "", "", "", "", "", ""))
            continue
        for test in tests_of(exes["loom"], loom_copy):
            # Each tool runs the test `--rounds` times, the two alternating: the median of
            # each stands (this machine is shared, and a test of a few milliseconds is mostly
            # the process's start).
            times = {"loom": [], "fgvt": []}
            seen = {}
            for _ in range(args.rounds):
                for tool, copy in (("loom", loom_copy), ("fgvt", fgvt_copy)):
                    env = dict(os.environ, **spec["env"], FGVT_STATS="1")
                    cmd = [exes[tool], "--exact", test, "--test-threads", "1", "--nocapture"]
                    code, out, took, cpu = run_timed(cmd, copy, env, args.timeout)
                    times[tool].append((took, cpu))
                    stats = re.findall(r"fgvt-stats: \S+ \S+ states=(\d+) runs=(\d+)", out)
                    seen.setdefault(tool, (verdict(code, out), stats))
            median = {tool: sorted(t)[len(t) // 2] for tool, t in times.items()}
            for tool in totals:
                totals[tool] += median[tool][0]
                cpu_totals[tool] += median[tool][1]
            states = sum(int(s) for s, _ in seen["fgvt"][1])
            runs = sum(int(r) for _, r in seen["fgvt"][1])
            rows.append((name, test, seen["loom"][0], f"{median['loom'][0]:.2f}",
                         seen["fgvt"][0], f"{median['fgvt'][0]:.2f}", f"{median['fgvt'][1]:.2f}",
                         str(states), str(runs)))
            print(" | ".join(rows[-1]), file=sys.stderr)
    table = ["| suite | test | loom | loom s | fgvt | fgvt s | fgvt CPU s | fgvt states | fgvt runs |",
             "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    table += ["| " + " | ".join(r) + " |" for r in rows]
    same = sum(1 for r in rows if r[2] and r[2] == r[4])
    table.append(f"| **total** | {len(rows)} tests, {same} with the same verdict | | "
                 f"{totals['loom']:.2f} | | {totals['fgvt']:.2f} | {cpu_totals['fgvt']:.2f} | | |")
    table.append(f"\nloom's CPU time in all: {cpu_totals['loom']:.2f} s. Each time is the median "
                 f"of {args.rounds} runs of the test's process, the tools alternating.")
    text = "\n".join(table) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
