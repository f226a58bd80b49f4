"""Start a bench cluster that is safe by default: ``uttt-cluster`` (``python -m ref_sim.cluster_serve``).

Dask's own ``dask scheduler`` and ``dask worker`` listen on every interface, and whoever reaches a
scheduler's port runs programs as the workers' user. ``uttt-cluster`` starts the same Dask
programs on loopback unless told, with TLS from one certificate folder
(:mod:`ref_sim.series.run.cluster_tls`) and the dashboards off; options that would open what those
defaults keep closed are refused. Its commands and options: docs/cluster.md, "``uttt-cluster``".
"""

from __future__ import annotations

import argparse
import getpass
import ipaddress
import os
import shlex
import socket
import subprocess
import sys
import time

from agent.cli_common import OneLineParser, check_output, say_error
from agent.options import whole
from ref_sim.series.run import cluster_address, cluster_reach, cluster_tls
from ref_sim import entry_point

MODULE = "ref_sim.cluster_serve"
LOOPBACK = "127.0.0.1"
#: The scheduler's dashboard (and HTTP health server) port: Dask's own.
DASHBOARD_PORT = 8787
#: Dask's options that choose where a program listens or how it encrypts: set here, never
#: passed through (``--`` cannot open what the defaults keep closed unseen).
OWN_OPTIONS = ("--host", "--interface", "--listen-address", "--contact-address", "--protocol",
               "--port", "--tls-ca-file", "--tls-cert", "--tls-key", "--dashboard",
               "--no-dashboard", "--dashboard-address", "--jupyter")
#: The environment that makes a Dask program refuse unencrypted connections.
REQUIRE_ENCRYPTION = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}


class ServeError(ValueError):
    """A command line that cannot start a safe program: one line."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=entry_point.prog(MODULE),
        description="Start a Dask scheduler or worker for the bench's --cluster runners, "
                    "listening on loopback unless told, with TLS from one certificate folder "
                    "(see docs/cluster.md).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    certs = commands.add_parser("certs", help="make a certificate folder: a CA and a member "
                                "certificate for every machine of the cluster")
    certs.add_argument("folder", metavar="DIR", help="the folder to make (mode 0700)")
    certs.add_argument("--days", type=whole(1, cluster_tls.MAX_DAYS),
                       default=cluster_tls.DEFAULT_DAYS,
                       help=f"days the certificates are valid (default {cluster_tls.DEFAULT_DAYS})")
    certs.add_argument("--force", action="store_true",
                       help="replace the certificates DIR holds (every machine then needs the "
                            "new folder)")

    scheduler = commands.add_parser("scheduler", help="start a Dask scheduler")
    add_listening(scheduler, "the scheduler", f"{LOOPBACK}:{DASHBOARD_PORT}")
    scheduler.add_argument("--port", type=whole(0, 65535), default=cluster_address.DEFAULT_PORT,
                           help=f"its port (default {cluster_address.DEFAULT_PORT}; 0: any free one, "
                                "see --scheduler-file)")
    scheduler.add_argument("--scheduler-file", metavar="FILE",
                           help="write its address (JSON) there once it listens")

    worker = commands.add_parser("worker", help="start a Dask worker (with its nanny)")
    worker.add_argument("address", metavar="ADDRESS", nargs="?",
                        help=f"the scheduler's address, e.g. tls://head:8786 (default: ${cluster_address.ENV})")
    add_listening(worker, "the worker (and its nanny)", f"{LOOPBACK}:0")
    worker.add_argument("--nworkers", type=whole(1, 1024), default=1, metavar="N",
                        help="worker processes (default 1; a game holds its worker's GIL in "
                             "ref_sim.arena and self-play: one single-threaded worker per spare "
                             "core there)")
    worker.add_argument("--nthreads", type=whole(1, 1024), metavar="N",
                        help="threads per worker process (default: Dask's, the cores / N)")
    return parser


def add_listening(parser, who: str, dashboard: str) -> None:
    """--host or --interface, --tls, --dashboard (on ``dashboard`` when given alone), --dry-run."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--host", help=f"the address {who} listens on (default {LOOPBACK}: this "
                                      "machine only; 0.0.0.0: every interface)")
    where.add_argument("--interface", metavar="IFACE",
                       help=f"the network interface {who} listens on, e.g. eth0")
    parser.add_argument("--tls", metavar="DIR",
                        help="the cluster's certificate folder (uttt-cluster certs DIR): TLS, "
                             f"and only its holders get in (default: ${cluster_tls.ENV})")
    parser.add_argument("--dashboard", metavar="ADDRESS", nargs="?", const=dashboard,
                        help=f"turn the dashboard on, on ADDRESS (default {dashboard}); off "
                             "unless given")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the Dask command instead of running it")


# -- where a program listens -------------------------------------------------------------

def listening_host(host: str | None, interface: str | None) -> tuple[str, bool]:
    """``(the host Dask is given, whether that is loopback only)``: :data:`LOOPBACK` when
    neither is named.  An unknown interface or host is :class:`ServeError`, one line."""
    if interface:
        from distributed.utils import get_ip_interface
        try:
            address = get_ip_interface(interface)
        except ValueError as error:
            raise ServeError(f"--interface {interface}: {str(error).splitlines()[0]}") from None
        return address, is_loopback(address)
    if host is None:
        return LOOPBACK, True
    return host, is_loopback(host)


def is_loopback(host: str, option: str = "--host") -> bool:
    """Whether ``host`` (an IP address or a name, ``[::1]`` too) is this machine only.  Every
    interface (``0.0.0.0``, ``::``, empty) is not; a name that does not resolve is
    :class:`ServeError`.

    >>> is_loopback("127.0.0.1"), is_loopback("[::1]"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    bare = host.strip().strip("[]")
    if not bare:
        return False
    try:
        return ipaddress.ip_address(bare.split("%")[0]).is_loopback
    except ValueError:
        pass
    try:
        found = {info[4][0] for info in socket.getaddrinfo(bare, None)}
    except (socket.gaierror, UnicodeError) as error:
        raise ServeError(f"{option} {host}: unknown host "
                         f"({getattr(error, 'strerror', None) or error})") from None
    return all(ipaddress.ip_address(address.split("%")[0]).is_loopback for address in found)


def exposure_warning(who: str, host: str, ports: str) -> str:
    """The one line said when ``who`` listens beyond this machine without TLS."""
    return (f"warning: {who} listens on {host or 'every interface'} without TLS: anyone who "
            f"reaches {ports} can run any program as {_user()} on every worker of this "
            "cluster; give it --tls DIR (uttt-cluster certs DIR), or keep it on a network only "
            "you use (docs/cluster.md)")


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:               # no user name (a container's uid without an entry)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "this user"


def passthrough(extra: list[str]) -> list[str]:
    """The options after ``--``, refused (one line) where they choose where to listen or how to
    encrypt."""
    for option in extra:
        name = option.split("=", 1)[0]
        if name in OWN_OPTIONS:
            raise ServeError(f"{name} after --: where Dask listens and how it encrypts are this "
                             "command's own options (--host, --interface, --port, --tls, "
                             "--dashboard)")
    return extra


# -- the Dask command lines ---------------------------------------------------------------

def scheduler_command(args, extra: list[str]) -> tuple[list[str], dict, list[str]]:
    """``(argv, environment additions, lines to say first)`` of the Dask scheduler."""
    host, loopback = listening_host(args.host, args.interface)
    files = _tls_files(args.tls)
    command = [sys.executable, "-m", "distributed.cli.dask_scheduler",
               "--host", host, "--port", str(args.port)]
    said = []
    if files:
        command += ["--protocol", "tls", *files.dask_options()]
    elif not loopback:
        said.append(exposure_warning("the scheduler", host, f"port {args.port}"))
    command += _dashboard(args.dashboard, f"{LOOPBACK}:{DASHBOARD_PORT}", said)
    if args.scheduler_file:
        try:    # Dask writes it with open("w"): a FIFO there would hang it, a symlink be written through
            check_output(args.scheduler_file)
        except OSError as error:
            raise ServeError(f"--scheduler-file: {error}") from None
        command += ["--scheduler-file", args.scheduler_file]
    scheme = "tls" if files else "tcp"
    shown = f"[{host}]" if ":" in host else host
    said.insert(0, f"scheduler on {scheme}://{shown}:{args.port}"
                + (" (loopback: this machine only; --host or --interface opens it)"
                   if loopback else "")
                + (f", TLS with {files.folder}" if files else ""))
    return command + passthrough(extra), REQUIRE_ENCRYPTION if files else {}, said


def worker_command(args, extra: list[str]) -> tuple[list[str], dict, list[str]]:
    """``(argv, environment additions, lines to say first)`` of the Dask worker."""
    given = cluster_address.cluster_address(args.address)
    if not given:
        raise ServeError(f"no scheduler address: give ADDRESS (e.g. tls://head:8786) or "
                         f"${cluster_address.ENV}")
    try:
        address, files = cluster_address.secured_address(given, args.tls)
    except cluster_address.ClusterError as error:
        raise ServeError(str(error)) from None
    scheduler_host = address.partition("://")[2].rsplit(":", 1)[0]
    if args.host is None and args.interface is None and \
            not is_loopback(scheduler_host, "the scheduler's host"):
        raise ServeError(f"the scheduler {address} is not on this machine's loopback: give "
                         "--host (an address of this machine that the scheduler and the other "
                         "workers reach) or --interface")
    host, loopback = listening_host(args.host, args.interface)
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--host", host,
               "--nworkers", str(args.nworkers)]
    if args.nthreads:
        command += ["--nthreads", str(args.nthreads)]
    said = []
    if files:
        command += ["--protocol", "tls", *files.dask_options()]
    elif not loopback:
        said.append(exposure_warning("the worker", host, "its ports"))
    command += _dashboard(args.dashboard, f"{LOOPBACK}:0", said)
    said.insert(0, f"worker for {address}, listening on {host}"
                + (" (loopback: this machine only)" if loopback else "")
                + (f", TLS with {files.folder}" if files else ""))
    return command + passthrough(extra), REQUIRE_ENCRYPTION if files else {}, said


def certificates_refused(address: str, files) -> str | None:
    """Why the scheduler at ``address`` refuses this worker's certificates (or this worker
    its), one line; None when it accepts them or does not answer yet (Dask's worker waits for
    a scheduler that is starting; it would retry refused certificates for ever)."""
    host, port = address.partition("://")[2].rsplit(":", 1)
    host = host.strip("[]")
    try:
        socket.create_connection((host, int(port)), timeout=cluster_reach.REACH_TIMEOUT).close()
    except OSError:
        return None
    # A client's view of the same files: the handshake is the one the worker will make.
    return cluster_reach.tls_refusal(host, int(port), files.security(), files.folder,
                                     time.monotonic() + cluster_reach.REACH_TIMEOUT)


def _tls_files(tls: str | None):
    folder = cluster_tls.folder_from(tls)
    if not folder:
        return None
    try:
        return cluster_tls.read_folder(folder)
    except cluster_tls.TLSFolderError as error:
        raise ServeError(str(error)) from None


def _dashboard(address: str | None, closed: str, said: list[str]) -> list[str]:
    """Dask's dashboard options: off on ``closed`` (its HTTP server listens anyway), or on at
    ``address`` (a warning beyond loopback: the dashboard asks no password)."""
    if address is None:
        return ["--no-dashboard", "--dashboard-address", closed]
    host = address.rpartition(":")[0] if ":" in address else address     # [::1]:8787 too
    if not is_loopback(host, "--dashboard"):
        where = address if host.strip("[]") else f"every interface ({address})"
        said.append(f"warning: the dashboard listens on {where}: anyone "
                    "who reaches it sees the cluster's tasks and logs, no password asked")
    return ["--dashboard", "--dashboard-address", address]


# -- the command --------------------------------------------------------------------------

def make_certs(args, prog: str) -> int:
    try:
        files = cluster_tls.make_folder(args.folder, days=args.days, replace=args.force)
    except cluster_tls.TLSFolderError as error:
        say_error(prog, str(error))
        return 2
    until = cluster_tls.expiry(files)
    print(f"{files.folder}: {', '.join(cluster_tls.FILES)}"
          + (f", valid until {until:%Y-%m-%d}" if until else "") + ".\n"
          "Copy this folder to every machine of the cluster (scheduler, workers, the machine you "
          "run series from) over a channel you trust (scp), and to nowhere else: whoever holds "
          "it can run programs on the workers.\n"
          f"Then: uttt-cluster scheduler --tls {files.folder} --host HOST; uttt-cluster worker "
          f"tls://HOST:{cluster_address.DEFAULT_PORT} --tls {files.folder} --host THIS-MACHINE; "
          f"--cluster tls://HOST:{cluster_address.DEFAULT_PORT} --tls {files.folder} on the runners.")
    return 0


@entry_point.entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = entry_point.prog(MODULE)
    if args.command == "certs":
        if extra:
            parser.error("certs takes no options after --")
        return make_certs(args, prog)
    try:
        import distributed  # noqa: F401  (the cluster extra: said here, not by a traceback)
    except ImportError:
        parser.error(f"the {args.command} needs Dask's distributed: {cluster_address.INSTALL_HINT}")
    try:
        build = scheduler_command if args.command == "scheduler" else worker_command
        command, environment, said = build(args, extra)
    except ServeError as error:
        parser.error(str(error))
    for line in said:
        say_error(prog, line)
    if args.command == "worker" and not args.dry_run:        # read and checked just above
        address, files = cluster_address.secured_address(cluster_address.cluster_address(args.address), args.tls)
        refused = files and certificates_refused(address, files)
        if refused:
            parser.error(f"{address}: {refused}")
    if args.dry_run:
        print(" ".join(f"{name}={shlex.quote(value)}" for name, value in environment.items())
              + (" " if environment else "") + shlex.join(command))
        return 0
    env = {**os.environ, **environment}
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(sys.executable, command, env)     # Dask's process from here on
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
