"""Certificates for a bench cluster: one folder that makes a machine a member.

    uttt-cluster certs ~/uttt-tls          # once: a CA, and a member certificate it signed

The folder (``ca.pem``, ``member.pem``, ``member-key.pem``) is Dask's mutual TLS for every
machine of the cluster; the CA's key is thrown away once it has signed. What holding it means, and
why nothing can be revoked: docs/cluster.md, "On several machines: TLS". Making a folder needs
``cryptography`` (imported only then); reading one, only the standard library.
"""

from __future__ import annotations

import datetime
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

#: The environment variable that stands for ``--tls DIR``.
ENV = "UTTT_CLUSTER_TLS"
CA_FILE = "ca.pem"
CERT_FILE = "member.pem"
KEY_FILE = "member-key.pem"
FILES = (CA_FILE, CERT_FILE, KEY_FILE)
#: Days a new folder's certificates are valid.
DEFAULT_DAYS = 365
MAX_DAYS = 3650
MAKE_HINT = "make one with: uttt-cluster certs DIR"


class TLSFolderError(ValueError):
    """A certificate folder that cannot be used (missing, incomplete, unreadable, mismatched)."""


@dataclass(frozen=True)
class TLSFiles:
    """The three files of a certificate folder, checked by :func:`read_folder`."""
    folder: Path
    ca: Path
    cert: Path
    key: Path

    def security(self, role: str = "client"):
        """Dask's :class:`~distributed.security.Security` for ``role`` (client, scheduler or
        worker): this folder's files, and encryption required on every connection."""
        from distributed.security import Security
        return Security(**{"tls_ca_file": str(self.ca), f"tls_{role}_cert": str(self.cert),
                           f"tls_{role}_key": str(self.key)}, require_encryption=True)

    def dask_options(self) -> list[str]:
        """The same files as ``dask scheduler`` and ``dask worker`` take them."""
        return ["--tls-ca-file", str(self.ca), "--tls-cert", str(self.cert),
                "--tls-key", str(self.key)]


def folder_from(given: str | None = None) -> str | None:
    """``--tls``'s value, else ``UTTT_CLUSTER_TLS``, else None (no TLS)."""
    return given or os.environ.get(ENV) or None


def read_folder(folder: str | os.PathLike) -> TLSFiles:
    """The certificate folder ``folder``, checked as far as can be without a peer: its three
    files are there, the CA is a certificate and the member certificate matches its key.
    Raises :class:`TLSFolderError` with one line otherwise."""
    path = Path(folder).expanduser()
    where = f" (from ${ENV})" if os.environ.get(ENV) == str(folder) else ""
    label = f"--tls {folder}{where}"
    if not path.is_dir():
        raise TLSFolderError(f"{label}: no such folder ({MAKE_HINT})")
    missing = [name for name in FILES if not (path / name).is_file()]
    if missing:
        raise TLSFolderError(f"{label}: no {', '.join(missing)} there: not a certificate folder "
                             f"({MAKE_HINT})")
    files = TLSFiles(path, path / CA_FILE, path / CERT_FILE, path / KEY_FILE)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cafile=str(files.ca))
    except (ssl.SSLError, OSError, ValueError) as error:
        raise TLSFolderError(f"{label}: {CA_FILE} is no certificate ({_reason(error)})") from None
    try:
        context.load_cert_chain(str(files.cert), str(files.key))
    except (ssl.SSLError, OSError, ValueError) as error:
        raise TLSFolderError(f"{label}: {CERT_FILE} and {KEY_FILE} are no certificate and its "
                             f"key ({_reason(error)})") from None
    return files


def _reason(error: Exception) -> str:
    if isinstance(error, ssl.SSLError) and error.reason:
        return error.reason.lower().replace("_", " ")
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def make_folder(folder: str | os.PathLike, days: int = DEFAULT_DAYS,
                replace: bool = False) -> TLSFiles:
    """Make ``folder`` (mode 0700) with a new CA and a member certificate it signed, valid for
    ``days``; the keys are readable by their owner only.  A folder that holds certificates
    already is kept unless ``replace`` (every machine then needs the new folder).  Raises
    :class:`TLSFolderError` with one line when it cannot."""
    path = Path(folder).expanduser()
    there = [name for name in FILES if (path / name).exists()]
    if there and not replace:
        raise TLSFolderError(f"{folder} holds certificates already ({', '.join(there)}): kept; "
                             "--force replaces them (then copy the new folder to every machine "
                             "and restart the cluster)")
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise TLSFolderError("making certificates needs the cryptography package: "
                             "pip install 'uttt-agent[cluster]' (or pip install cryptography)") \
            from None

    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=days)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S")

    def key_usage(**uses):
        flags = dict.fromkeys(("digital_signature", "content_commitment", "key_encipherment",
                               "data_encipherment", "key_agreement", "key_cert_sign", "crl_sign",
                               "encipher_only", "decipher_only"), False)
        return x509.KeyUsage(**{**flags, **uses})

    def name(text):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name(f"uttt-cluster CA {stamp}")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(key_usage(key_cert_sign=True, crl_sign=True), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    member_key = ec.generate_private_key(ec.SECP256R1())
    member = (x509.CertificateBuilder().subject_name(name(f"uttt-cluster member {stamp}"))
              .issuer_name(ca_name).public_key(member_key.public_key())
              .serial_number(x509.random_serial_number())
              .not_valid_before(start).not_valid_after(end)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(key_usage(digital_signature=True, key_agreement=True), critical=True)
              # One certificate for every role: a scheduler serves, clients and workers connect.
              .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                    ExtendedKeyUsageOID.CLIENT_AUTH]),
                             critical=False)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(member_key.public_key()),
                             critical=False)
              .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                  ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
    del ca_key          # never written: the folder cannot make more members

    pem = serialization.Encoding.PEM
    contents = {
        CA_FILE: ca.public_bytes(pem),
        CERT_FILE: member.public_bytes(pem),
        KEY_FILE: member_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()),
    }
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)
        for file_name, data in contents.items():
            _write_private(path / file_name, data)
    except OSError as error:
        raise TLSFolderError(f"cannot write the certificates into {folder}: "
                             f"{error.strerror or error}") from None
    return read_folder(path)


def _write_private(path: Path, data: bytes) -> None:
    """``data`` into ``path`` for its owner only (0600), by way of a new file renamed over it:
    a folder cut short by a full disk keeps what it had."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(partial, path)


def expiry(files: TLSFiles) -> datetime.datetime | None:
    """When the member certificate stops being valid (None without ``cryptography``)."""
    try:
        from cryptography import x509
    except ImportError:
        return None
    return x509.load_pem_x509_certificate(files.cert.read_bytes()).not_valid_after_utc
