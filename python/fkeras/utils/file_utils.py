"""get_file: download a file into the Keras cache, with Keras 3's semantics.

The cache is `$KERAS_HOME` (or `~/.keras`; `/tmp/.keras` when that is not writable), under
`cache_subdir` ("datasets"). A cached file is reused when its hash matches `file_hash`
(sha256 for 64 hex digits, else md5), re-downloaded otherwise; a download whose hash does
not match raises ValueError and leaves nothing behind. Downloads go to a temporary file that is
renamed into place, so an interrupted download never looks cached. With extract=True the
archive (tar, tar.gz, zip) is unpacked into `<name>_extracted` (or `<name>`), whose path is
returned.
"""

import hashlib
import os
import shutil
import tempfile
import urllib.parse

# urllib.request, tarfile and zipfile are imported where they are used: `import fkeras` should
# not pay for an HTTP client (about 50 ms).


def keras_home():
    return os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")


def resolve_hasher(algorithm, file_hash=None):
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None
                                 and len(file_hash) == 64):
        return hashlib.sha256()
    if algorithm in ("auto", "md5"):
        return hashlib.md5()
    return hashlib.new(algorithm)


def hash_file(fpath, algorithm="sha256", chunk_size=65535):
    hasher = resolve_hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto", chunk_size=65535):
    """Whether the file's hash equals `file_hash`."""
    hasher = resolve_hasher(algorithm, file_hash)
    return hash_file(fpath, hasher, chunk_size) == str(file_hash)


def _safe_members(names, path):
    root = os.path.realpath(path)
    for name in names:
        target = os.path.realpath(os.path.join(path, name))
        if os.path.commonpath([root, target]) != root:
            raise ValueError(f"Archive member {name!r} would extract outside {path}.")


def extract_archive(file_path, path=".", archive_format="auto"):
    """Extracts a tar or zip archive into `path`; returns True if it was one."""
    import tarfile
    import zipfile

    formats = ["tar", "zip"] if archive_format == "auto" else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format))
    for fmt in formats:
        if fmt == "tar" and tarfile.is_tarfile(file_path):
            with tarfile.open(file_path) as archive:
                _safe_members(archive.getnames(), path)
                archive.extractall(path)
            return True
        if fmt == "zip" and zipfile.is_zipfile(file_path):
            with zipfile.ZipFile(file_path) as archive:
                _safe_members(archive.namelist(), path)
                archive.extractall(path)
            return True
    return False


def _download(origin, target):
    import urllib.error
    import urllib.request

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(origin) as response:
                    shutil.copyfileobj(response, out)
            except urllib.error.HTTPError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}") from e
            except urllib.error.URLError as e:
                raise Exception(f"URL fetch failure on {origin}: None -- {e.reason}") from e
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None, force_download=False):
    """Downloads a file from a URL if it is not already in the cache; returns its path.

    Args:
        fname: file name in the cache (default: the URL's last path component).
        origin: the URL.
        file_hash: expected sha256 (or md5) hex digest; md5_hash is the legacy form.
        cache_subdir: sub-directory of the cache. Defaults to "datasets".
        hash_algorithm: "auto", "sha256" or "md5".
        extract / untar: extract the archive and return the extraction directory.
        archive_format: "auto", "tar", "zip" or a list of them.
        cache_dir: the cache location (default $KERAS_HOME or ~/.keras).
        force_download: download even if cached.

    Example:
    ```python
    path = fkeras.utils.get_file(origin="https://example.com/data.npz",
                                 file_hash="...sha256...")
    ```
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir or keras_home())
    if not os.access(base, os.W_OK):
        if os.path.exists(base) or not os.access(os.path.dirname(base) or ".", os.W_OK):
            base = os.path.join(tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    given = fname
    fname = os.fspath(fname) if fname else os.path.basename(urllib.parse.urlsplit(origin).path)
    if not fname or fname in (os.curdir, os.pardir):
        raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'. "
                         "Please specify the `fname` argument.")
    if given and (os.sep in fname or (os.altsep and os.altsep in fname)):
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify "
                         f"the file's parent directory, use the `cache_dir` argument. "
                         f"Received: fname={fname}")
    extraction_dir = None
    if extract or untar:
        if given and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)

    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and not validate_file(target, file_hash,
                                                                     hash_algorithm):
        print("A local file was found, but it seems to be incomplete or outdated because the "
              f"{hash_algorithm} file hash does not match the original value of {file_hash} "
              "so we will re-download the data.")
        download = True
    if download:
        print(f"Downloading data from {origin}")
        _download(origin, target)
        if file_hash is not None and not validate_file(target, file_hash, hash_algorithm):
            os.remove(target)
            raise ValueError(
                f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does "
                f"not match the provided value of {file_hash}."
            )
    if extraction_dir is not None:
        if download or not os.path.exists(extraction_dir):
            if not extract_archive(target, extraction_dir,
                                   "tar" if untar else archive_format):
                import warnings

                warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target
