"""Where a series' cluster is: the scheduler's address as given (``--cluster``, ``$UTTT_CLUSTER``),
checked and completed (scheme, port), with its TLS certificates' folder; the options that say it.
Nothing here imports Dask (docs/cluster.md).
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass

from ref_sim.series.run import cluster_tls

from agent.cli_common import only_with


#: The environment variable that stands for ``--cluster ADDRESS``.
ENV = "UTTT_CLUSTER"
#: The port of an address given without one: ``dask scheduler``'s own default
#: (``distributed.Scheduler.default_port``), so ``--cluster head`` means what it started.
DEFAULT_PORT = 8786
#: Dask's transports over TCP, whose addresses are HOST:PORT.
SCHEMES = ("tcp", "tls", "ws", "wss")
#: Those of them that are encrypted: they need a certificate folder (--tls DIR).
ENCRYPTED_SCHEMES = ("tls", "wss")

INSTALL_HINT = "pip install 'uttt-agent[cluster]'"


class ClusterError(RuntimeError):
    """The cluster cannot be used: no engine installed, no scheduler, no admitted worker."""


def cluster_address(given: str | None = None) -> str | None:
    """``--cluster``'s value, else ``UTTT_CLUSTER``, else None (play locally).

    >>> cluster_address("tcp://head:8786")
    'tcp://head:8786'
    """
    return given or os.environ.get(ENV) or None


_HOST_NAME = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?")     # an IPv4 too


def scheduler_address(text: str, default_scheme: str = "tcp") -> str:
    """``text`` (``--cluster`` or ``UTTT_CLUSTER``) as ``SCHEME://HOST:PORT``: the scheme
    ``default_scheme`` (``tls`` with certificates) and the port :data:`DEFAULT_PORT` where none
    is given.  Raises :class:`ClusterError` with one line for what is no such address.

    >>> scheduler_address("head"), scheduler_address("tls://[::1]:9000")
    ('tcp://head:8786', 'tls://[::1]:9000')
    """
    def bad(why: str) -> ClusterError:
        where = " (from $" + ENV + ")" if os.environ.get(ENV) == text else ""
        return ClusterError(f"bad cluster address {text!r}{where}: {why} (expected "
                            "tcp://HOST:PORT, as `dask scheduler` prints it)")

    scheme, sep, rest = text.strip().partition("://")
    if not sep:
        scheme, rest = default_scheme, scheme
    if scheme not in SCHEMES:
        raise bad(f"unknown scheme {scheme + '://'!r} (Dask's are {', '.join(SCHEMES)})")
    if "://" in rest:
        raise bad("two schemes")
    if rest.startswith("["):                    # [IPv6]:port
        host, sep, port = rest[1:].partition("]")
        if not sep:
            raise bad("no ']' after the IPv6 address")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"{host!r} is not an IPv6 address") from None
        if port and not port.startswith(":"):
            raise bad(f"{port!r} after the IPv6 address is no ':PORT'")
        shown, port = f"[{host}]", port[1:] if port else None
    else:
        host, sep, port = rest.rpartition(":")
        if not sep:
            host, port = rest, None
        if ":" in host:
            # "::1:8786" is itself an IPv6 address, but a port after "::1" is what was meant.
            if _is_ipv6(host) and port.isdigit():
                raise bad(f"an IPv6 address needs brackets: {scheme}://[{host}]:{port}")
            if _is_ipv6(rest):
                raise bad(f"an IPv6 address needs brackets: {scheme}://[{rest}]:{DEFAULT_PORT}")
            raise bad("too many ':'; an IPv6 address goes in brackets: [::1]:PORT")
        if not host:
            raise bad("no host")
        if host.isdigit():
            raise bad(f"{host!r} is a port, not a host")
        if not _HOST_NAME.fullmatch(host):
            raise bad(f"{host!r} is no host name or IP address")
        shown = host
    if port is None:
        port = str(DEFAULT_PORT)
    if not port:
        raise bad("no port after ':'")
    if not (port.isascii() and port.isdigit()):
        raise bad(f"the port {port!r} is not a number")
    if not 1 <= int(port) <= 65535:
        raise bad(f"the port {port} is not between 1 and 65535")
    return f"{scheme}://{shown}:{int(port)}"


@dataclass(frozen=True)
class ClusterTarget:
    """Where a runner plays: the scheduler's address as given, and the certificate folder
    (``--tls DIR``; None: none given, ``UTTT_CLUSTER_TLS`` is read when connecting)."""
    address: str
    tls: str | None = None

    def __str__(self) -> str:
        return self.address


def add_cluster_options(parser, action: str = "play the games", note: str = "") -> None:
    """``--cluster ADDRESS`` and ``--tls DIR`` on ``parser`` (or an argument group): every
    runner's, read back by :func:`cluster_target`.  ``action`` and ``note`` word the help."""
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help=f"{action} on a Dask cluster, e.g. tls://head:8786 (default: "
                             f"${ENV}; needs {INSTALL_HINT})" + (f"; {note}" if note else ""))
    parser.add_argument("--tls", metavar="DIR",
                        help="the cluster's certificate folder (made by uttt-cluster certs DIR): "
                             "encrypted and authenticated connections to a tls:// scheduler, "
                             f"the scheme of an address without one (default: ${cluster_tls.ENV})")


def check_options(parser, args) -> None:
    """``--tls`` with no cluster to play on (no ``--cluster``, no ``$UTTT_CLUSTER``) is a usage
    error: it would be ignored."""
    only_with(parser, args, f"--cluster (or ${ENV})",
                      cluster_address(getattr(args, "cluster", None)) is not None, {"--tls": "tls"})


def cluster_target(args) -> ClusterTarget | None:
    """The cluster that :func:`add_cluster_options`' options name (``--cluster`` or
    ``UTTT_CLUSTER``), for :func:`connect`; None: play here."""
    address = cluster_address(getattr(args, "cluster", None))
    return ClusterTarget(address, getattr(args, "tls", None)) if address else None


def secured_address(text: str, tls: str | None = None):
    """``(address, files)``: the scheduler's address read as :func:`scheduler_address` does (a
    ``tls://`` one when a certificate folder is given) and the checked certificate folder
    (:class:`ref_sim.series.run.cluster_tls.TLSFiles`; None without TLS).  ``tls``: ``--tls``, else
    ``UTTT_CLUSTER_TLS``.  An encrypted scheme without certificates, certificates with a plain
    scheme, or a folder that cannot be used: :class:`ClusterError`, one line."""
    folder = cluster_tls.folder_from(tls)
    address = scheduler_address(text, default_scheme="tls" if folder else "tcp")
    scheme = address.partition("://")[0]
    if scheme in ENCRYPTED_SCHEMES and not folder:
        raise ClusterError(f"{address} needs the cluster's certificates: --tls DIR or "
                           f"${cluster_tls.ENV} (the folder the scheduler was started with; "
                           f"{cluster_tls.MAKE_HINT})")
    if folder and scheme not in ENCRYPTED_SCHEMES:
        raise ClusterError(f"{address} with certificates (--tls {folder}): {scheme}:// is not "
                           "encrypted; a scheduler started with --tls is at tls://HOST:PORT")
    if not folder:
        return address, None
    try:
        return address, cluster_tls.read_folder(folder)
    except cluster_tls.TLSFolderError as error:
        raise ClusterError(str(error)) from None


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True
