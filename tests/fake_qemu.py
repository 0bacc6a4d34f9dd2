#!/usr/bin/env python3
"""A fake qemu-system-riscv64 for the harness tests: the ``fake`` fixture (tests/conftest.py) runs it through
SCHEDLAB_QEMU. It records its argv (one JSON list a line in FAKE_QEMU_LOG) and, depending on FAKE_QEMU_MODE,

* ``canned``: prints the file FAKE_QEMU_CONSOLE and exits with FAKE_QEMU_EXIT;
* ``killparent``: the first boot (no file FAKE_QEMU_MARK yet) SIGKILLs its parent, later ones are ``canned``;
* ``hang``:   prints the canned console without its last newline, starts a
  grandchild (pid in FAKE_QEMU_PIDFILE) and sleeps, to be killed by the timeout;
* ``sim``:    plays a tiny kernel: reads -append, answers bad tokens with ERROR,
  prints BOOT, one RESULT per job and SUMMARY.  Elapsed time of a job is
  BASE[app] * (1 + (jobs - 1) * EXTRA[policy]), so slowdowns are exact:
  with two jobs timeslice 2.0, gang 1.5, partition 1.2.  Its BOOT, RESULT and
  SUMMARY lines are the recorded ones of FAKE_QEMU_TEMPLATE (a real boot's
  console) with values changed, so when the kernel's format moves the tests
  see the new format.

With FAKE_QEMU_SELFPID set it writes its own pid there first.
"""
import json, os, subprocess, sys, time

argv = sys.argv[1:]
if any("dumpdtb=" in arg for arg in argv):      # it has no device tree to dump: deterministic boots keep QEMU's
    sys.exit(1)
if os.environ.get("FAKE_QEMU_LOG"):
    with open(os.environ["FAKE_QEMU_LOG"], "a") as log:
        log.write(json.dumps(argv) + "\n")
mode = os.environ.get("FAKE_QEMU_MODE", "canned")
out = sys.stdout
if os.environ.get("FAKE_QEMU_SELFPID"):         # its own pid, for the tests that QEMU dies with its parent
    with open(os.environ["FAKE_QEMU_SELFPID"], "w") as f:
        f.write(str(os.getpid()))

if mode == "killparent":
    # the first boot SIGKILLs the process that started it (a Dask worker lost mid-boot) and waits to die with
    # it; every later boot (FAKE_QEMU_MARK exists) plays the canned console
    mark = os.environ["FAKE_QEMU_MARK"]
    if not os.path.exists(mark):
        with open(mark, "w") as f:
            f.write(str(os.getpid()))       # the test checks this boot did not outlive its worker
        os.kill(os.getppid(), 9)
        time.sleep(60)
        sys.exit(1)
    mode = "canned"

if mode == "canned":
    out.buffer.write(open(os.environ["FAKE_QEMU_CONSOLE"], "rb").read())
    sys.exit(int(os.environ.get("FAKE_QEMU_EXIT", "0")))

if mode == "hang":
    out.buffer.write(open(os.environ["FAKE_QEMU_CONSOLE"], "rb").read().rstrip(b"\n"))
    out.flush()
    child = subprocess.Popen(["sleep", "60"])
    with open(os.environ["FAKE_QEMU_PIDFILE"], "w") as f:
        f.write(str(child.pid))
    time.sleep(60)
    sys.exit(0)

# mode == "sim"
cpus = int(argv[argv.index("-smp") + 1])
tokens = argv[argv.index("-append") + 1].split()
POLICIES = os.environ.get("FAKE_QEMU_POLICIES", "timeslice,gang,partition").split(",")
BASE = {"gauss": 10000, "oddeven": 20000, "synth": 5000, "fault": 100}
EXTRA = {"timeslice": 1.0, "gang": 0.5, "partition": 0.2}
print("OpenSBI v1.1")
print("Platform Name             : riscv-virtio,qemu")
policy, jobs = "timeslice", []
for token in tokens:
    key, _, value = token.partition("=")
    if key == "policy" and value in POLICIES:
        policy = value
    elif key == "job" and value.partition(":")[0] in list(BASE) + ["hog"]:
        app, _, keys = value.partition(":")
        jobs.append((app, [kv for kv in keys.split(",") if kv]))
    elif key not in ("quantum", "seed", "trace", "irq", "calib", "timeout", "clock", "wakeboost", "model",
                     "idle") or key == "policy":
        print(f"ERROR bad token '{token}': expected policy=timeslice|gang|partition, quantum=, job=<app>...")
        sys.exit(2)
import re
TEMPLATE = open(os.environ["FAKE_QEMU_TEMPLATE"], encoding="utf-8", errors="replace").read().replace("\r", "")
def recorded(keyword):
    return next(line for line in TEMPLATE.splitlines() if line.startswith(keyword + " "))
def with_values(line, **values):
    for key, value in values.items():
        line = re.sub(rf"(?<= ){key}=\S*", f"{key}={value}", line, count=1)
    return line
print(with_values(recorded("BOOT"), harts=cpus, policies=",".join(POLICIES)))
if "calib=off" not in tokens:
    print(recorded("CALIB"))
elapsed = {}
for i, (app, keys) in enumerate(jobs):
    if app != "hog":
        elapsed[i] = int(BASE[app] * (1 + (len(jobs) - 1) * EXTRA[policy]))
end = max(elapsed.values(), default=0)
failed = 0
for i, (app, keys) in enumerate(jobs):
    e = elapsed.get(i, end)
    check = "FAIL" if app == "fault" else "ok"
    failed += check != "ok"
    line = with_values(recorded("RESULT"), job=i + 1, app=app, policy=policy, harts=cpus, procs=cpus, arrive_us=0,
                       start_us=10, end_us=10 + e, elapsed_us=e, cpu_us=e * cpus, check=check)
    print(line + (" reason=pagefault" if app == "fault" else ""))
print(with_values(recorded("SUMMARY"), policy=policy, harts=cpus, jobs=len(jobs), failed=failed, makespan_us=end + 10))
plugin = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-plugin"), None)
if plugin:          # the machine model's report, after SUMMARY (tools/model/README.md); job 0 = kernel and idle
    profile = dict(kv.partition("=")[::2] for kv in plugin.split(",")[1:])["profile"]
    print(f"MODEL end profile={profile} cycle_ps=250 charge=on accesses={1000 * (len(jobs) + 1)} stall_us=7")
    for j in range(len(jobs) + 1):
        print(f"MODEL job={j} accesses=1000 misses={10 + j} l2_hits=5 llc_hits=1 coherence=2 local={6 + j} remote=1 "
              f"stall_us={j}")
sys.exit(3 if failed else 0)
