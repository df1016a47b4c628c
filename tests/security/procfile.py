"""The production server, started exactly as the Procfile's `web:` line says."""

import os
import signal
import subprocess
import tempfile
from pathlib import Path

from tests.polling import eventually
from tests.realtime.servers import ROOT, DaphneServer

PROCFILE = ROOT / "Procfile"


def web_command() -> str:
    lines = [line for line in PROCFILE.read_text().splitlines() if line.startswith("web:")]
    assert len(lines) == 1, "the Procfile has exactly one web: line"
    return lines[0].removeprefix("web:").strip()


def server_program() -> Path:
    """The executable the web: line starts, relative to the repository root."""
    return ROOT / web_command().split()[0]


class ProcfileServer(DaphneServer):
    """`with ProcfileServer({...}) as server:` as DaphneServer, but the production command; PORT and HOST
    come through the environment, as a platform that reads Procfiles passes them."""

    def __enter__(self) -> "ProcfileServer":
        self.log = tempfile.TemporaryFile()
        env = {**self.env, "PORT": str(self.port), "HOST": "127.0.0.1"}
        self.process = subprocess.Popen(["bash", "-c", f"exec {web_command()}"], cwd=ROOT, env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_listening()
        return self

    def workers_serving(self, workers: int, seconds: float = 60) -> bool:
        """Whether `workers` worker processes have loaded the application within `seconds` (uvicorn says so
        in the log): until then, the kernel holds new connections in the listening socket's queue."""
        return eventually(lambda: self.output().count("Application startup complete.") >= workers, seconds)

    def worker_pids(self) -> list[int]:
        """The processes gunicorn's master (the one started) runs the application in."""
        return [int(stat.parent.name) for stat in Path("/proc").glob("[0-9]*/stat")
                if stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[1] == str(self.pid)]

    def open_files(self, under: Path) -> list[str]:
        """The files under `under` the workers hold open (deleted ones and unnamed temporary files included),
        but gunicorn's own heartbeat file."""
        paths = [os.readlink(fd) for pid in self.worker_pids() for fd in Path(f"/proc/{pid}/fd").iterdir()]
        return [path for path in paths if path.startswith(str(under)) and not Path(path).name.startswith("wgunicorn-")]

    def __exit__(self, *exc_info) -> None:
        # gunicorn's master stops its workers on SIGTERM; the group goes too if the master was slow.
        super().__exit__(*exc_info)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
