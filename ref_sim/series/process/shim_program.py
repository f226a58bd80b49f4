"""The shim an isolated bot starts through, a program of its own that the project never imports:
run as ``python -I -S shim_program.py CGROUPS CPUS DATA_BYTES PROCESSES FILE_BYTES COMMAND...``
(standard library only, no site, nothing of the project on its path).  It enters its cgroup
(each ``cgroup.procs`` of the comma-separated CGROUPS), pins itself, sets the limits (hard ones:
the soft and the hard limit alike), then becomes the command (whose children inherit all of it).
``-`` leaves one out.  PROCESSES ``N``: N more than the user runs now; ``=N``: exactly N (inside
the bot's own user namespace, which the kernel counts apart).  Not entering its cgroup is a
failure to start (exit 127).  Started by :func:`ref_sim.series.process.contain.start`.
"""

import os
import sys


def main(argv):
    import resource     # POSIX: here, so that the module loads anywhere (pytest's doctests import it on Windows)
    groups, cpus, data, processes, file_bytes = argv[1:6]
    for procs in groups.split(",") if groups != "-" else []:
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError as error:
            sys.stderr.write(f"could not start: cannot enter its cgroup ({error})\n")
            sys.exit(127)
    if cpus != "-" and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, [int(c) for c in cpus.split(",")])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if data != "-":
        resource.setrlimit(resource.RLIMIT_DATA, (int(data), int(data)))
    if file_bytes != "-":
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(file_bytes), int(file_bytes)))
    if processes.startswith("="):
        cap = int(processes[1:])
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        cap = cap if hard < 0 else min(cap, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
    elif processes != "-" and os.getuid() != 0:
        uid, running = os.getuid(), 0
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
                if int(fields["Uid"].split()[0]) == uid:
                    running += int(fields["Threads"])
            except (OSError, ValueError, KeyError):
                pass
        cap = running + int(processes)
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        cap = cap if hard < 0 else min(cap, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
    try:
        os.execvp(argv[6], argv[6:])
    except OSError as error:
        sys.stderr.write(f"could not start: {error}\n")
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv)
