"""A game's files sent back from a cluster worker: what its folder holds, bounded (so many files,
so many bytes), and written again into the client's ``--out``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ref_sim.series.output import telemetry


# -- a game's files, sent back from a worker ---------------------------------------------

#: What a worker sends back of a game's files (its bots can write there): at most this many
#: files, of the first :data:`MAX_LISTED` names, and this many bytes in all.
MAX_SENT_FILES = 64
MAX_SENT_BYTES = 64 << 20
MAX_LISTED = 1024


def read_files(directory: Path, *, most_files: int = MAX_SENT_FILES,
               most_bytes: int = MAX_SENT_BYTES) -> dict[str, bytes]:
    """The files of ``directory`` (a game's logs on a worker), to send back with its result,
    bounded whatever a bot put there: each read as a log is kept
    (:func:`ref_sim.series.output.telemetry.read_bounded`: a big or sparse one by its first and last
    halves, with a line saying so), no symlink, FIFO or device read, and within ``most_files``
    (:data:`MAX_SENT_FILES`) and ``most_bytes`` (:data:`MAX_SENT_BYTES`): the rest is not sent."""
    with os.scandir(directory) as entries:
        names = sorted(entry.name for _, entry in zip(range(MAX_LISTED), entries))
    files, left = {}, most_bytes
    for name in names:
        if len(files) >= most_files or left <= 0:
            break
        try:
            files[name] = telemetry.read_bounded(directory / name, min(telemetry.LOG_CAP_BYTES, left))
        except OSError:                     # not a regular file, or gone
            continue
        left -= len(files[name])
    return files


def save_files(directory: Path, files: dict[str, bytes]) -> None:
    """Write the files a worker sent back (:func:`read_files`) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / Path(name).name).write_bytes(data)        # a bare name: stays inside
