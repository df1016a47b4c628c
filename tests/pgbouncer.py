"""Debian's PgBouncer (1.18: no prepared statements in transaction mode) in front of the test run's
PostgreSQL, in transaction mode, on a free loopback port: for the tests that prove the service runs
behind it (`.ci/run` runs the whole PostgreSQL suite behind one of its own)."""

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from .realtime.servers import free_port, listening, stop

PROGRAM = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def installed() -> bool:
    return Path(PROGRAM).exists()


class PgBouncer:
    """`with PgBouncer(host, port) as bouncer:` listens on 127.0.0.1:bouncer.port until the block ends."""

    def __init__(self, host: str, port: int, pool_size: int = 4):
        self.upstream, self.pool_size = (host or "127.0.0.1", port or 5432), pool_size
        self.port = free_port()

    def __enter__(self) -> "PgBouncer":
        self.folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
        (self.folder / "userlist.txt").write_text('"postgres" ""\n')
        (self.folder / "pgbouncer.ini").write_text(
            f"[databases]\n* = host={self.upstream[0]} port={self.upstream[1]}\n"
            f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.folder / 'userlist.txt'}\npool_mode = transaction\n"
            f"default_pool_size = {self.pool_size}\nmax_client_conn = 1000\n"
            f"logfile = {self.folder / 'pgbouncer.log'}\n")
        command = [PROGRAM, str(self.folder / "pgbouncer.ini")]
        if os.geteuid() == 0:  # it refuses to run as root
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
            command[1:1] = ["-u", "postgres"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        if not listening(self.process, self.port):
            log = self.log()
            self.__exit__()
            raise RuntimeError(f"pgbouncer did not listen on {self.port}:\n{log}")
        return self

    def __exit__(self, *exc_info) -> None:
        stop(self.process)
        shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        path = self.folder / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""
