"""One line that names what is wrong with a database URL, and the fix; never a secret.

The command line opens the database before it serves anything (`workbench sandbox`,
`workbench lab`); what goes wrong there is almost always the reader's to fix: a
PostgreSQL database not created yet, a server that is not running, a password
refused, an SQLite file, folder or mount that cannot be written, a URL that is not
one. `describe` turns the error into a sentence naming the problem and the command
that fixes it; the URL's password never appears in it (`safe_url`).
"""

from __future__ import annotations

import errno
import getpass
import os
import re
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url

__all__ = ["check_url", "describe", "safe_url"]

#: What a URL of each backend looks like, for the messages.
_EXAMPLES = "sqlite:///PATH/sandbox.db or postgresql+psycopg://HOST/DBNAME"
#: ``user:password@`` in something that may not parse as a URL.
_CREDENTIALS = re.compile(r"(//[^/:@]*):[^/@]*@")


def safe_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (also when it does not parse)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (sa.exc.ArgumentError, ValueError):
        return _CREDENTIALS.sub(r"\1:***@", url)


def check_url(url: str) -> str | None:
    """Why ``url`` is not a database URL the sandbox can use, or ``None`` when it is one."""
    try:
        parsed = make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return f"--db {safe_url(url)!r} is not a database URL: give {_EXAMPLES}"
    try:
        parsed.get_dialect()
    except sa.exc.NoSuchModuleError:
        return (
            f"--db names a database kind SQLAlchemy does not know ({parsed.drivername!r}): "
            f"give {_EXAMPLES}"
        )
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        return f"--db names {backend}, which the sandbox does not run on: give {_EXAMPLES}"
    if backend == "postgresql" and not parsed.database:
        return f"--db {safe_url(url)!r} names no database: give postgresql+psycopg://HOST/DBNAME"
    return None


def describe(url: str, error: BaseException) -> str | None:
    """One line naming what ``error`` (met opening ``url``) means and how to fix it.

    ``None`` when the error is none of the known problems (the caller lets it rise).
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        return _postgres(parsed, error)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return _sqlite(Path(parsed.database or ""), error)
    return None


#: PostgreSQL's SQLSTATE for a privilege the user lacks ("permission denied for ...").
_INSUFFICIENT_PRIVILEGE = "42501"
_DENIED = re.compile(
    r'permission denied for (database|schema|table|relation|sequence) "?([^"\s]+)"?'
)


def _postgres(url: URL, error: BaseException) -> str | None:
    if not isinstance(error, sa.exc.DBAPIError):
        return None
    text = str(error.orig or error)
    host = url.host or "localhost"
    port = url.port or 5432
    where = f"{host}:{port}"
    options = f"-h {host}" + (f" -p {port}" if url.port else "")
    options += f" -U {url.username}" if url.username else ""
    if _DENIED.search(text) or getattr(error.orig, "sqlstate", None) == _INSUFFICIENT_PRIVILEGE:
        return _privilege(url, where, error)
    if not isinstance(error, sa.exc.OperationalError):
        return None
    if f'database "{url.database}" does not exist' in text:
        return (
            f'PostgreSQL at {where} has no database "{url.database}": create it with '
            f"`createdb {options} {url.database}`, or name another in --db"
        )
    found = re.search(r'role "([^"]+)" does not exist', text)
    if found:
        return (
            f'PostgreSQL at {where} has no user "{found[1]}": create it with '
            f"`createuser -h {host}{f' -p {port}' if url.port else ''} {found[1]}`, or name "
            "another in --db"
        )
    if "password authentication failed" in text or "no password supplied" in text:
        user = url.username or "(the default user)"
        return (
            f"PostgreSQL at {where} refused the password of user {user}: correct the "
            "user and password in --db (or in ~/.pgpass)"
        )
    if "Connection refused" in text or "could not connect" in text or "timeout" in text:
        return (
            f"Nothing accepts PostgreSQL connections at {where}: start the server, or "
            "correct the host and port in --db"
        )
    if "could not translate host name" in text or "Name or service not known" in text:
        return f"The host {host!r} of --db is not known: correct the host name in --db"
    return None


def _privilege(url: URL, where: str, error: BaseException) -> str:
    """What the user of ``url`` may not do, and the grant (as the database's owner) or the
    --db that fixes it."""
    user = url.username or os.environ.get("PGUSER") or getpass.getuser()
    database = url.database or ""
    head = f"PostgreSQL at {where}: user {user}"
    own = "or give --db a database this user owns"
    psql = f"psql -h {url.host or 'localhost'}" + (f" -p {url.port}" if url.port else "")
    psql += f" -d {database}"
    denied = _DENIED.search(str(error))
    kind, name = (denied[1], denied[2]) if denied else ("", "")
    if kind == "database":
        grant = f'GRANT CONNECT ON DATABASE "{database}" TO "{user}"'
        return (
            f'{head} may not connect to "{database}": as its owner run '
            f"`{psql} -c '{grant}'`, {own}"
        )
    if kind == "schema":
        grant = f'GRANT CREATE ON SCHEMA {name} TO "{user}"'
        return (
            f'{head} may not create the sandbox\'s tables in the schema {name} of "{database}": '
            f"as the database's owner run `{psql} -c '{grant}'`, {own}"
        )
    if kind:
        return (
            f'{head} may not use the {kind} {name} of "{database}", which another user made: '
            f"give --db that user, {own}"
        )
    return f'{head} lacks a privilege on "{database}" ({_reason(error)}): {own}'


def _sqlite(path: Path, error: BaseException) -> str | None:
    readonly = isinstance(error, sa.exc.OperationalError) and (
        "readonly database" in str(error) or "unable to open database file" in str(error)
    )
    denied = isinstance(error, OSError) and error.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
    if not (readonly or denied):
        return None
    path = path.expanduser().absolute()
    folder = path.parent
    if _read_only_mount(folder):
        return (
            f"The database {path} is on a read-only file system: give --db a file on a "
            "writable one (sqlite:///PATH/sandbox.db)"
        )
    if path.exists() and not os.access(path, os.W_OK):
        return (
            f"The database file {path} is read-only for you: make it writable "
            f"(`chmod u+w {path}`) or give --db another file"
        )
    folder = _existing(folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        return (
            f"The folder {folder} of the database is not writable for you (SQLite writes "
            f"its journal beside the file): `chmod u+wx {folder}`, or give --db a file "
            "in a folder you can write"
        )
    return (
        f"The database {path} cannot be written ({_reason(error)}): check the file's "
        "and its folder's permissions, or give --db another file"
    )


def _existing(folder: Path) -> Path:
    """``folder``, or the nearest of its parents that exists (what a ``mkdir -p`` writes in)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _read_only_mount(folder: Path) -> bool:
    statvfs = getattr(os, "statvfs", None)  # not on Windows
    if statvfs is None:
        return False
    try:
        return bool(statvfs(_existing(folder)).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    if isinstance(error, sa.exc.DBAPIError) and error.orig is not None:
        return str(error.orig).splitlines()[0]
    return type(error).__name__
