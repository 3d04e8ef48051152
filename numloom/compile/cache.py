"""The per-user compile cache (DESIGN.md §6): compiled kernels on disk, keyed by what made them.

The directory is ``$NUMLOOM_CACHE_DIR``, else ``$XDG_CACHE_HOME/numloom``, else
``~/.cache/numloom``, read at each call so that tests can point it elsewhere. It is created 0700
and, since numloom loads native code from it, used only while it is owned by the current user and
writable by nobody else. A directory that fails that check is refused with one warning, and
compiled kernels are then kept in memory for this process only.

An entry is one file named by its key, which it also holds::

    numloom-cache-v2\\n
    <its key>\\n
    <sha256 hex of the content>\\n
    <content bytes>

written to a temp file in the same directory and ``os.replace``'d into place, so readers never see
half an entry. An entry that is truncated, altered or unreadable, or that holds another key (a file
copied or renamed over it), is a miss and is removed. Nothing
here unpickles anything: an entry is opaque bytes (a shared object, a cubin, PTX).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import tempfile
import threading

from ..core.dag import warn_at_user

MAGIC = b"numloom-cache-v2\n"
_DIGEST_LEN = 64  # sha256 hex
_KEY = re.compile(r"[0-9a-f]{64}\Z")


class NumloomCacheWarning(UserWarning):
    """The compile cache directory cannot be used safely; kernels are cached in memory instead."""


def make_key(*parts: str | bytes) -> str:
    """A sha256 hex key over numloom's version and ``parts``, each length-prefixed.

    The length prefix keeps ``("ab", "c")`` and ``("a", "bc")`` apart.
    """
    from ..core.config import VERSION

    digest = hashlib.sha256()
    for part in ("numloom", VERSION, *parts):
        data = part.encode() if isinstance(part, str) else bytes(part)
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def cache_dir() -> str:
    """The cache directory that the environment names now (not created or checked)."""
    path = os.environ.get("NUMLOOM_CACHE_DIR")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "numloom")
    return os.path.abspath(os.path.expanduser(path))


def pack(data: bytes, key: str = "") -> bytes:
    """An entry's file content: the header with its key and the content's sha256, then the
    content."""
    return MAGIC + key.encode() + b"\n" + hashlib.sha256(data).hexdigest().encode() + b"\n" + data


def unpack(blob: bytes, key: str | None = None) -> bytes | None:
    """The content of an entry's file, or None when the file is not a whole, intact entry (of
    ``key``, when given)."""
    if not blob.startswith(MAGIC):
        return None
    end = blob.find(b"\n", len(MAGIC), len(MAGIC) + 65)
    if end < 0:
        return None
    stored = blob[len(MAGIC) : end]
    start = end + 1 + _DIGEST_LEN + 1
    if blob[start - 1 : start] != b"\n" or (key is not None and stored != key.encode()):
        return None
    data = blob[start:]
    if hashlib.sha256(data).hexdigest().encode() != blob[end + 1 : start - 1]:
        return None
    return data


def _problem(path: str) -> str | None:
    """Why ``path`` is not a safe cache directory (None when it is); creates it 0700 if missing."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError as e:
        return (
            f"it cannot be created or read ({e.strerror or e}); set NUMLOOM_CACHE_DIR to a "
            f"directory of your own"
        )
    uid, mode = st.st_uid, stat.S_IMODE(st.st_mode)
    facts = f"owner uid {uid}, mode {mode:04o}; you are uid {os.getuid()}"
    if not stat.S_ISDIR(st.st_mode):
        return f"it is not a directory ({facts}); set NUMLOOM_CACHE_DIR to a directory of your own"
    if uid != os.getuid():
        return (
            f"it belongs to another user ({facts}); set NUMLOOM_CACHE_DIR to a directory of your "
            f"own"
        )
    if mode & stat.S_IRWXU != stat.S_IRWXU or not os.access(path, os.R_OK | os.W_OK | os.X_OK):
        return (
            f"you cannot read and write it ({facts}); fix it with `chmod 700 {path}` or set "
            f"NUMLOOM_CACHE_DIR"
        )
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            f"it is writable by other users ({facts}), who could plant code that numloom would "
            f"load; fix it with `chmod 700 {path}` or set NUMLOOM_CACHE_DIR"
        )
    return None


def max_bytes() -> int:
    """The size the cache directory is kept under (``NUMLOOM_CACHE_MAX_BYTES``, 1 GiB)."""
    try:
        return int(os.environ.get("NUMLOOM_CACHE_MAX_BYTES", "") or 1 << 30)
    except ValueError:
        return 1 << 30


class Cache:
    """Entries in one directory, or in memory when that directory was refused (``path`` None).

    The directory stays under ``max_bytes()`` as ccache keeps its own: a hit marks its entry
    used (its modification time), and a write that takes the directory's size over the limit
    removes the least recently used entries until it is 90% full. The size is counted once per
    process, on a thread from its first write (a directory of 27000 entries takes 0.13 s to
    count: a first call's compile would wait for it), then kept up to date by its own writes
    (other processes' writes are found by the next eviction, which counts again)."""

    def __init__(self, path: str | None):
        self.path = path
        self.memory: dict[str, bytes] = {}
        self.size: int | None = None  # bytes in the directory as this process knows them
        self._lock = threading.Lock()
        self._counting: threading.Thread | None = None
        self._added = 0  # bytes written while the directory was being counted

    def _file(self, key: str) -> str:
        if not _KEY.match(key):
            raise ValueError(f"cache key must be 64 lowercase hex digits (make_key), got {key!r}")
        return os.path.join(self.path, key)

    def get(self, key: str) -> bytes | None:
        if self.path is None:
            return self.memory.get(key)
        file = self._file(key)
        try:
            with open(file, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return None
        except OSError:
            blob = b""
        data = unpack(blob, key)
        if data is None:
            self.discard(key)
        else:
            try:
                os.utime(file)  # used now: the last to be evicted
            except OSError:
                pass
        return data

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (unread: it may still turn out bad)."""
        if self.path is None:
            return key in self.memory
        return os.path.exists(self._file(key))

    def put(self, key: str, data: bytes) -> None:
        if self.path is None:
            self.memory[key] = bytes(data)
            return
        file, tmp = self._file(key), None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".tmp-", suffix=".part")
            blob = pack(bytes(data), key)
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, file)
            with self._lock:
                if self.size is None:  # (counted on a thread; what is written meanwhile, added)
                    self._added += len(blob)
                    if self._counting is None:
                        self._counting = threading.Thread(target=self._count, daemon=True,
                                                          name="numloom-cache-count")  # fmt: skip
                        self._counting.start()
                    return
                self.size += len(blob)
                over = self.size > max_bytes()
            if over:
                self._evict(int(max_bytes() * 0.9))
        except OSError as e:
            # A full disk or a vanished directory costs a recompile later, not this run.
            if tmp is not None:
                _remove(tmp)
            from ..core import config

            if config.DEBUG >= 1:
                print(f"numloom: could not write cache entry {file}: {e}", file=sys.stderr)

    def _count(self) -> None:
        counted = sum(size for _, _, size in self._entries())
        with self._lock:  # (an entry written while counting may count twice: evicted sooner)
            self.size, self._added = counted + self._added, 0
            over = self.size > max_bytes()
        if over:
            self._evict(int(max_bytes() * 0.9))

    def wait_counted(self) -> None:
        """Wait for the count of the directory's bytes that the first write started."""
        thread = self._counting
        if thread is not None:
            thread.join()

    def _entries(self) -> list:
        """``(last use, file, bytes)`` of every entry in the directory."""
        found = []
        try:
            with os.scandir(self.path) as listing:
                for entry in listing:
                    if _KEY.match(entry.name):
                        try:
                            st = entry.stat()
                        except OSError:
                            continue
                        found.append((st.st_mtime, entry.path, st.st_size))
        except OSError:
            pass
        return found

    def _evict(self, target: int) -> None:
        """Remove the least recently used entries until at most ``target`` bytes remain."""
        entries = sorted(self._entries())
        total = sum(size for _, _, size in entries)
        for _, file, size in entries:
            if total <= target:
                break
            _remove(file)
            total -= size
        with self._lock:
            self.size = total

    def discard(self, key: str) -> None:
        if self.path is None:
            self.memory.pop(key, None)
        else:
            _remove(self._file(key))


def _remove(file: str) -> None:
    try:
        os.remove(file)
    except OSError:
        pass


_caches: dict[str, Cache] = {}


def current() -> Cache:
    """The cache for the directory the environment names now, checked once per directory."""
    path = cache_dir()
    cache = _caches.get(path)
    if cache is None:
        problem = _problem(path)
        if problem is not None:
            warn_at_user(
                f"numloom: not using the compile cache directory {path}: {problem}. Compiled "
                f"kernels are cached in memory for this process only.",
                NumloomCacheWarning,
            )
        cache = _caches[path] = Cache(None if problem else path)
    return cache


def get(key: str) -> bytes | None:
    """The bytes stored under ``key`` (from ``make_key``), or None on a miss or a bad entry."""
    return current().get(key)


def put(key: str, data: bytes) -> None:
    """Store ``data`` under ``key``; a failure to write is not an error (the entry is a cache)."""
    current().put(key, data)


def discard(key: str) -> None:
    """Remove the entry under ``key``, e.g. when its content turned out unusable."""
    current().discard(key)
