"""The first look at a cluster's scheduler, before Dask is asked to connect: that something answers
at the address within :data:`REACH_TIMEOUT` s, that it is a Dask scheduler, and, where TLS is
refused or missing, why (a scheduler without TLS, certificates it does not accept).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from ref_sim.series.run import cluster_tls
from ref_sim.series.run.cluster_address import DEFAULT_PORT, ClusterError


#: Seconds :func:`connect` tries to reach the scheduler: a closed port (retried all that time, as
#: a scheduler may still be starting) or an address that never answers fails then, not after
#: Dask's 30 s; a peer that connects but says nothing gets two seconds more at most.
REACH_TIMEOUT = 5.0


def reach(address: str, files=None, *, timeout: float = REACH_TIMEOUT) -> None:
    """Make sure a Dask scheduler answers at ``address`` within ``timeout`` s (two
    more at most for a peer that connects and then says nothing), over TLS with ``files`` (a
    :class:`ref_sim.series.run.cluster_tls.TLSFiles`); :class:`ClusterError` with one line if not.  Dask's
    ``Client`` would retry for 30 s, wait forever for a silent peer and fail with any error at
    all on a peer that answers something else (or refuses our certificate)."""
    outcome: dict = {}
    # A thread of its own: a name lookup that hangs cannot hold the caller longer.
    asker = threading.Thread(target=_ask_identity, args=(address, outcome, files, timeout),
                             name="uttt-reach", daemon=True)
    asker.start()
    asker.join(timeout + 3)
    if "identity" not in outcome:
        why = outcome.get("why", f"no answer within {timeout:g} s (a wrong address, a "
                                 "machine that is down, or a firewall?)")
        raise ClusterError(f"cannot reach the scheduler at {address}: {why}")
    identity = outcome["identity"]
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind in ("Worker", "Nanny"):
        raise ClusterError(f"{address} is a Dask {kind.lower()}, not the scheduler: give the "
                           "scheduler's address (the one `dask worker` was given)")
    if not (isinstance(kind, str) and "Scheduler" in kind):
        raise ClusterError(f"{address} answers, but as a Dask {kind!r}, not the scheduler")


ANOTHER_SERVICE = (f"another service on that port? the scheduler's is {DEFAULT_PORT} unless "
                   "told, its dashboard's 8787")


def _ask_identity(address: str, outcome: dict, files=None, timeout: float = REACH_TIMEOUT) -> None:
    """:func:`reach`'s work: a TCP connection first (so that a refusal or a timeout is told
    apart, which Dask's error does not always do), with ``files`` a TLS handshake (so that
    certificates refused either way are said so: Dask retries them until its timeout), then
    Dask's handshake and the scheduler's identity, all within ``timeout`` s.  Puts ``identity``,
    or ``why`` not, into ``outcome``."""
    from distributed import Security
    from distributed.core import rpc

    host, port = address.partition("://")[2].rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host.strip("[]"), int(port)),
                                     timeout=max(0.1, deadline - time.monotonic())).close()
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                outcome["why"] = ("connection refused: no scheduler listens on that port (not "
                                  "started? another port?)")
                return
            time.sleep(0.1)                     # the scheduler may be starting
        except socket.gaierror as error:
            outcome["why"] = f"unknown host ({error.strerror})"
            return
        except TimeoutError:                    # socket.timeout too, on Python 3.10
            return                              # no answer: reach says so
        except OSError as error:                # no route to host...
            text = error.strerror or str(error)
            outcome["why"] = text[:1].lower() + text[1:]
            return

    security = files.security() if files else Security()
    if files:
        why = tls_refusal(host.strip("[]"), int(port), security, files.folder, deadline, timeout)
        if why:
            outcome["why"] = why
            return

    import asyncio  # here, not at the top: a local series imports this module for its options

    async def identity():
        scheduler = rpc(address, timeout=timeout,
                        connection_args=security.get_connection_args("client"))
        try:
            return await asyncio.wait_for(scheduler.identity(),
                                          max(2.0, deadline - time.monotonic()))
        finally:
            await scheduler.close_rpc()

    try:
        outcome["identity"] = asyncio.run(identity())
    except asyncio.TimeoutError:
        outcome["why"] = f"something accepts connections there but says nothing ({ANOTHER_SERVICE})"
    except Exception:                           # the answer is no Dask message
        outcome["why"] = f"something answers there, but not as a Dask scheduler ({ANOTHER_SERVICE})"
    if "why" in outcome and not files and _speaks_tls(host.strip("[]"), int(port)):
        outcome["why"] = ("the scheduler there speaks TLS: connect with "
                          f"tls://{address.partition('://')[2]} and its certificate folder "
                          f"(--tls DIR or ${cluster_tls.ENV})")


def tls_refusal(host: str, port: int, security, folder: Path, deadline: float,
                timeout: float = REACH_TIMEOUT) -> str | None:
    """Why a TLS connection to ``host:port`` with ``security``'s certificates fails (one line
    naming ``folder``) by ``deadline`` (``timeout`` s after the first try), or None when the
    scheduler accepts them.  Its TLS handshake, then its
    first bytes: Dask's server speaks first, so a refused client certificate (an alert that
    comes after the handshake in TLS 1.3) shows before anything waits."""
    import ssl

    def closed(how: str) -> str:
        return (f"the scheduler ended the TLS connection ({how}): did it refuse this client's "
                f"certificate? (was it started with another certificate folder than {folder}?)")

    context = security.get_connection_args("client")["ssl_context"]
    try:
        with socket.create_connection((host, port),
                                      timeout=max(0.5, deadline - time.monotonic())) as raw:
            with context.wrap_socket(raw) as tls:
                tls.settimeout(max(1.0, deadline - time.monotonic()))
                first = tls.recv(1)
    except ssl.SSLCertVerificationError as error:
        return (f"the scheduler's certificate is not this cluster's ({error.verify_message}): "
                f"it was started with another certificate folder than {folder}; use that one")
    except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionResetError) as error:
        return closed(getattr(error, "strerror", None) or "closed")
    except ssl.SSLError as error:
        reason = (error.reason or str(error)).lower().replace("_", " ")
        if "alert" in reason:
            return (f"the scheduler refused this client's certificate ({reason}): it was started "
                    f"with another certificate folder than {folder}; use that one")
        return (f"no TLS there ({reason}): a scheduler started without certificates? "
                "(uttt-cluster scheduler --tls DIR starts one with them)")
    except TimeoutError:
        return (f"no TLS handshake within {timeout:g} s: a scheduler started without "
                "certificates? (uttt-cluster scheduler --tls DIR starts one with them)")
    except OSError as error:
        return f"the TLS connection failed: {error.strerror or error}"
    return None if first else closed("no data")


def _speaks_tls(host: str, port: int) -> bool:
    """Whether ``host:port`` answers a TLS handshake (certificates unchecked: only to say that
    a plain tcp:// client is knocking at a TLS scheduler)."""
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=2.0) as raw:
            with context.wrap_socket(raw) as tls:
                tls.settimeout(2.0)
        return True
    except ssl.SSLError as error:       # an alert is a TLS answer (our missing certificate)
        return "alert" in str(error).lower()
    except OSError:
        return False
